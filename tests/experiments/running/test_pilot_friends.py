"""`diarylab pilot` on a friends design: a copy with the first N role cards (every card keeping
its pairs per condition), one outcome letter per card × profile written again R times from its
stored prompt, and per hypothesis × judge the per-card SD, the single-letter noise and the full
design's minimum detectable effect at the Holm-adjusted level."""

from __future__ import annotations

import csv
import math
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from diarylab.experiments.analysis.verdicts import minimum_detectable_effect
from diarylab.experiments.cli import main
from diarylab.experiments.designs.opening import load_design
from diarylab.experiments.kinds.friends.pairs import expand
from diarylab.experiments.running.pilot import reduced_design
from diarylab.testing.friends_fixtures import friends_design
from diarylab.testing.stores import call, opened

ROOT = Path(__file__).resolve().parents[3]
SHIPPED = ROOT / "experiments" / "designs" / "friends.toml"


@pytest.fixture(scope="module")
def design(tmp_path_factory, tiny_model_folder) -> Path:
    """Three role cards (6 pairs per condition); H1 and H2 of the fixtures, one tiny judge."""
    folder = tmp_path_factory.mktemp("friends-pilot")
    path = friends_design(folder, tiny_model_folder, entries=2, outcome="[2]")
    text = path.read_text()
    text = text.replace('cards = ["amara", "tomasz"]', 'cards = ["amara", "tomasz", "neha"]')
    text = text.replace("b_first = [1]", "b_first = [2]")
    # Relative to the design: the pilot's copy lives elsewhere and must still find it.
    text = text.replace(str(folder / "profiles"), "profiles")
    path.write_text(text)
    return path


@pytest.fixture(scope="module")
def pilot(design, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("friends-pilot-out") / "p"
    args = ["pilot", str(design), "--diarists", "2", "--repeats", "3", "--out", str(out)]
    assert main([*args, "--no-progress"]) == 0
    return out


def rows(folder: Path) -> list[dict[str, str]]:
    with open(folder / "pilot.csv") as f:
        return list(csv.DictReader(f))


def test_the_pilot_runs_the_first_cards_with_their_pairs_per_condition(pilot):
    with opened(pilot / "run") as store:
        writers = {w for (w,) in store.select("letters", ["writer"], distinct=True)}
        firsts = store.select(
            "letters", ["condition", "writer"], where={"seat": "A", "letter_index": 1}
        )
    assert writers == {"amara", "tomasz"}  # the first 2 of the design's 3
    # Shift 2 is past two cards: replaced by 1, so each card keeps 2 pairs per condition.
    per_card = Counter((condition, writer) for condition, writer in firsts)
    assert set(per_card.values()) == {2}
    copy = (pilot / "run" / "design.toml").read_text()
    assert "-pilot" in copy and "b_first = [1]" in copy


def test_each_hypothesis_and_judge_gets_sd_noise_and_mde(pilot, capsys):
    table = rows(pilot)
    assert [(r["hypothesis"], r["judge"]) for r in table] == [
        ("H1", "tiny-judge"),
        ("H2", "tiny-judge"),
    ]
    for r in table:
        assert int(r["pilot_clusters"]) == 2 and int(r["full_clusters"]) == 3
        # The fixture runs the shipped design's rule, "intervals": unadjusted 95%.
        assert float(r["alpha"]) == pytest.approx(0.05)
        sd = float(r["cluster_sd"])
        assert math.isfinite(sd) and sd >= 0
        # The sign-flip test's own MDE: at 3 clusters its smallest one-sided p (1/8) is above
        # 0.025, so no effect is detectable, which the t formula hid.
        assert r["rule"] == "intervals" and float(r["mde"]) == math.inf
        assert math.isfinite(minimum_detectable_effect(sd, 3, alpha=0.05))
        # 2 cards × (the steered profile, unsteered): 4 prompts, each written 3 more times.
        assert int(r["noise_prompts"]) == 4 and int(r["repeats"]) == 3
    md = (pilot / "pilot.md").read_text()
    assert "(2 role cards)" in md and md.count("per-role-card SD") == 2
    assert "single-letter SD" in md


def test_single_letter_noise_is_the_pooled_sd_of_one_prompt_written_again(pilot):
    with opened(pilot / "repeats-3.sqlite") as store:
        ids = [i for (i,) in store.select("letters", ["letter_id"])]
        readings = store.select(
            "judgments",
            ["target_id", "value"],
            where={"item": "pattern:social_isolation", "readable": 1},
        )
        repeats = [
            (i, call(store, key)[0])
            for i, key in store.select("letters", ["letter_id", "call_key"])
        ]
    assert len(ids) == 12 and all(i.split("~")[0].endswith("2") for i in ids)  # letter 2
    values: dict[str, list[float]] = {}
    for target, value in readings:
        values.setdefault(target.split("~")[0], []).append(value)
    assert len(values) == 4 and all(len(v) == 3 for v in values.values())
    pooled = math.sqrt(np.mean([np.var(v, ddof=1) for v in values.values()]))
    assert [float(r["text_noise_sd"]) for r in rows(pilot)] == pytest.approx([pooled, pooled])
    # Same prompt as the run's letter (its exchange so far in view), seeds of its own.
    with opened(pilot / "run") as store:
        original = {
            letter_id: call(store, key)[0]
            for letter_id, key in store.select(
                "letters", ["letter_id", "call_key"], not_null=["call_key"]
            )
        }
    assert len(repeats) == 12
    for rid, mine in repeats:
        theirs = original[rid.split("~")[0]]
        assert mine["messages"] == theirs["messages"] and len(mine["messages"]) > 2
        assert mine["seed"] != theirs["seed"] and mine["steer"] == theirs["steer"]


def test_a_second_pilot_resumes_without_model_calls(pilot, design):
    before = (pilot / "pilot.csv").read_text()
    args = ["pilot", str(design), "--diarists", "2", "--repeats", "3", "--out", str(pilot)]
    assert main([*args, "--no-progress"]) == 0
    assert (pilot / "pilot.csv").read_text() == before
    for store in ("run/store.sqlite", "repeats-3.sqlite"):
        with opened(pilot / store) as opened_store:
            calls = opened_store.count("calls")
            assert opened_store.count("calls", distinct="key") == calls


def test_too_few_cards_for_the_design_s_shifts_is_one_clear_error(tmp_path, capsys):
    # The shipped design has 2 + 2 shifts: two cards can only hold one of each.
    args = ["pilot", str(SHIPPED), "--diarists", "2", "--out", str(tmp_path / "x")]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "give --diarists 3 or more" in err and "Traceback" not in err
    assert not (tmp_path / "x").exists()


@pytest.mark.parametrize("cards", [3, 4, 5, 8])
def test_a_pilot_of_the_shipped_design_keeps_every_card_s_balance(tmp_path, cards):
    full = load_design(SHIPPED)
    pilot = reduced_design(full, cards, tmp_path)
    spec = pilot.spec
    assert spec.pairs.card_ids == full.spec.pairs.card_ids[:cards]
    assert spec.hypotheses == full.spec.hypotheses
    pairs = expand(spec, spec.conditions.steered)
    full_pairs = expand(full.spec, full.spec.conditions.steered)
    assert len(pairs) == len(full_pairs) // 8 * cards
    # Each card in each seat × writing order as often as in the full design (2 per condition).
    seen = Counter(
        (p.condition, card, seat, p.first)
        for p in pairs
        for seat, card in (("A", p.card_a), ("B", p.card_b))
    )
    assert set(seen.values()) == {2} and len(seen) == 11 * cards * 4
    assert all(p.card_a != p.card_b for p in pairs)
