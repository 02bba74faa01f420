"""`diarylab pilot`: a reduced copy of a design run by the same engine into its own folder, the
first prompts rewritten R times, and per hypothesis × judge the per-diarist SD, the single-entry
noise and the full design's minimum detectable effect at the Holm-adjusted level."""

from __future__ import annotations

import csv
import math
from pathlib import Path

import numpy as np
import pytest

from diarylab.experiments.analysis.verdicts import minimum_detectable_effect
from diarylab.experiments.cli import main
from diarylab.testing.lab_fixtures import design_text, make_profile
from diarylab.testing.stores import opened

HYPOTHESES = """
[[hypotheses]]
id = "H1"
says = "steering raises the first entry's pattern score"
direction = "greater"
judges = ["tiny-judge"]
contrast = { kind = "first_entry_pattern", profile = "steered" }

[[hypotheses]]
id = "H2"
says = "steering keeps entries coherent"
direction = "less"
judges = ["tiny-judge"]
contrast = { kind = "coherence", profile = "steered" }
"""

CHATBOT = """
[[chatbots]]
id = "thanks"
kind = "fixed"
"""


@pytest.fixture(scope="module")
def design(tmp_path_factory, tiny_model_folder) -> Path:
    folder = tmp_path_factory.mktemp("pilot")
    profile = make_profile(folder, tiny_model_folder)
    text = design_text(
        tiny_model_folder,
        profile.relative_to(folder),  # relative to the design: the pilot's copy must resolve it
        entries=1,
        chatbots=CHATBOT,
        diarists='["amara", "tomasz", "neha"]',
        extra=HYPOTHESES,
    )
    path = folder / "design.toml"
    path.write_text(text)
    return path


@pytest.fixture(scope="module")
def pilot(design, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("pilot-out") / "p"
    args = ["pilot", str(design), "--diarists", "2", "--repeats", "3", "--out", str(out)]
    assert main([*args, "--no-progress"]) == 0
    return out


def rows(folder: Path) -> list[dict[str, str]]:
    with open(folder / "pilot.csv") as f:
        return list(csv.DictReader(f))


def test_the_pilot_runs_a_reduced_copy_in_its_own_folder(pilot):
    with opened(pilot / "run") as store:
        diarists = {d for (d,) in store.select("entries", ["diarist"], distinct=True)}
    assert diarists == {"amara", "tomasz"}  # the first 2 of the design's 3
    assert "-pilot" in (pilot / "run" / "design.toml").read_text()


def test_each_hypothesis_and_judge_gets_sd_noise_and_mde(pilot):
    table = rows(pilot)
    assert [(r["hypothesis"], r["judge"]) for r in table] == [
        ("H1", "tiny-judge"),
        ("H2", "tiny-judge"),
    ]
    for r in table:
        assert int(r["pilot_clusters"]) == 2 and int(r["full_clusters"]) == 3
        assert float(r["alpha"]) == pytest.approx(0.05 / 2)  # Holm's first step, m = 2
        sd = float(r["cluster_sd"])
        assert math.isfinite(sd) and sd >= 0
        # The sign-flip test's own MDE: at 3 clusters its smallest two-sided p (2/8) is above
        # Holm's first step, so no effect is detectable, which the t formula hid.
        assert r["rule"] == "holm" and float(r["mde"]) == math.inf
        assert math.isfinite(minimum_detectable_effect(sd, 3, alpha=0.025))
        assert int(r["noise_prompts"]) == 4 and int(r["repeats"]) == 3  # 2 diarists × 2 profiles


def test_single_entry_noise_is_the_pooled_within_prompt_sd(pilot):
    with opened(pilot / "repeats-3.sqlite") as store:
        assert store.count("entries") == 12
        readings = store.select(
            "judgments", ["target_id", "value"], where={"item": "coherence", "readable": 1}
        )
        texts = dict(store.select("entries", ["entry_id", "text"]))
    values: dict[str, list[float]] = {}
    for target, value in readings:
        values.setdefault(target.split("~")[0], []).append(value)
    assert len(values) == 4 and all(len(v) == 3 for v in values.values())
    pooled = math.sqrt(np.mean([np.var(v, ddof=1) for v in values.values()]))
    h2 = next(r for r in rows(pilot) if r["hypothesis"] == "H2")
    assert float(h2["text_noise_sd"]) == pytest.approx(pooled)
    # Twins share their repeat seeds; the texts still differ by the steering.
    assert len(set(texts.values())) > 6


def test_a_second_pilot_resumes_without_model_calls(pilot, design, capsys):
    before = (pilot / "pilot.csv").read_text()
    args = ["pilot", str(design), "--diarists", "2", "--repeats", "3", "--out", str(pilot)]
    assert main([*args, "--no-progress"]) == 0
    assert (pilot / "pilot.csv").read_text() == before
    assert "H1" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--diarists", "1"], "outside 2..3"),
        (["--diarists", "4"], "outside 2..3"),
        (["--diarists", "2", "--repeats", "1"], "below 2"),
    ],
)
def test_bad_pilot_options_are_one_clear_error(design, tmp_path, capsys, args, says):
    assert main(["pilot", str(design), *args, "--out", str(tmp_path / "x")]) == 2
    err = capsys.readouterr().err
    assert says in err and "Traceback" not in err
    assert not (tmp_path / "x").exists()


def test_a_design_without_hypotheses_has_nothing_to_size(design, tmp_path, capsys):
    text = design.read_text().split("[[hypotheses]]")[0]
    bare = design.parent / "bare.toml"
    bare.write_text(text)
    assert main(["pilot", str(bare), "--diarists", "2", "--out", str(tmp_path / "y")]) == 2
    assert "no hypotheses" in capsys.readouterr().err


def test_a_kind_without_pilot_support_is_refused_clearly():
    from types import SimpleNamespace

    from diarylab.experiments.running.pilot import supports_pilot
    from diarylab.foundation.errors import LabError

    class Plain:
        name = "plain"

    design = SimpleNamespace(kind=Plain(), path=Path("letters.toml"))
    with pytest.raises(LabError, match="cannot run a pilot yet"):
        supports_pilot(design)  # type: ignore[arg-type]


def test_with_two_judges_the_mde_is_the_verdicts_at_the_measured_correlation(
    tmp_path, tiny_model_folder
):
    """Two judges that read alike (the same tiny model, one with a coarser bound): the pilot
    measures their correlation, and its MDE is the two-judge verdict's at it."""
    from diarylab.experiments.analysis.rules import mde_sd

    profile = make_profile(tmp_path, tiny_model_folder)
    judges = f"""
[[judges]]
id = "tiny-judge"
kind = "local"
model = "{tiny_model_folder}"

[[judges]]
id = "tiny-twin"
kind = "local"
model = "{tiny_model_folder}"
max_error = 0.5
"""
    text = design_text(
        tiny_model_folder,
        profile.relative_to(tmp_path),
        entries=1,
        chatbots=CHATBOT,
        diarists='["amara", "tomasz", "neha", "eero", "fatma", "kenji"]',
        extra=HYPOTHESES.replace('["tiny-judge"]', '["tiny-judge", "tiny-twin"]'),
        judges=judges,
    ).replace("[analysis]", '[analysis]\ndecision_rule = "intervals"', 1)
    path = tmp_path / "design.toml"
    path.write_text(text)
    out = tmp_path / "pilot"
    args = ["pilot", str(path), "--diarists", "3", "--repeats", "2", "--out", str(out)]
    assert main([*args, "--no-progress"]) == 0
    table = rows(out)
    assert {r["judge"] for r in table} == {"tiny-judge", "tiny-twin"}
    for r in table:
        assert int(r["judges"]) == 2
        rho = float(r["judge_correlation"])
        assert rho > 0.8  # the same model read twice
        sd = float(r["cluster_sd"])
        # The full design's 6 diarists, both judges agreeing at the measured correlation.
        expected = mde_sd("intervals", 6, 2, judges=2, correlation=rho) * sd
        assert math.isfinite(expected) and float(r["mde"]) == pytest.approx(expected)
    assert "ρ" in (out / "pilot.md").read_text() and "measured" in (out / "pilot.md").read_text()
