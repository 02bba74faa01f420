"""Making a design's inline profiles inside a run folder (extraction, then a fixed setting or a
calibration with one of the design's judges), once; and the judge scorer calibration uses."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from diarists.patterns import load_pattern
from experiments.calibration import judge_scorer
from experiments.loading import load_design
from experiments.profile_making import InlineProfiles, resolve_profiles
from model_access.local import LocalModel
from model_access.settings import LocalSettings
from rubric.judges import build_judge
from tests.lab_fixtures import design_text

RULE = """
[[profiles]]
id = "lonely"
pattern = "social_isolation"
extraction = { pairs = 2, generation = { max_new_tokens = 5, temperature = 0.8 } }
RULE
"""


def inline_design(tmp_path, tiny_model_folder, rule: str):
    text = design_text(tiny_model_folder, None).replace(
        'profiles = ["unsteered"]', 'profiles = ["unsteered", "lonely"]'
    )
    path = tmp_path / "design.toml"
    path.write_text(text + RULE.replace("RULE", rule))
    return load_design(path)


def make(design, folder, tiny_model_folder, judges_asked):
    model = LocalModel.load(str(tiny_model_folder), LocalSettings(device="cpu"))

    def judge_for(judge_id):
        judges_asked.append(judge_id)
        return build_judge(design.spec.judge(judge_id), lambda m, s: model)

    inline = InlineProfiles(design, folder, model, judge_for, progress=False)
    return resolve_profiles(design, ["unsteered", "lonely"], make_inline=inline)


def test_fixed_rule_extracts_once_and_keeps_the_profile(tmp_path, tiny_model_folder):
    design = inline_design(tmp_path, tiny_model_folder, "steer = { layers = [1], strength = 0.5 }")
    asked: list[str] = []
    profiles = make(design, tmp_path / "run", tiny_model_folder, asked)
    lonely = profiles["lonely"]
    assert lonely.steered and lonely.steer.layers == (1,) and lonely.steer.strength == 0.5
    assert lonely.path == tmp_path / "run" / "profiles" / "lonely.toml"
    assert lonely.calibration["chosen_by"].startswith("fixed setting")
    assert asked == []  # a fixed setting needs no judge
    vector_file = tmp_path / "run" / "profiles" / "lonely.safetensors"
    stamp = vector_file.stat().st_mtime_ns
    again = make(design, tmp_path / "run", tiny_model_folder, asked)["lonely"]
    assert vector_file.stat().st_mtime_ns == stamp  # made once, read back after
    assert again.spec() == lonely.spec()


def test_calibration_rule_uses_the_design_judge_and_records_its_choice(tmp_path, tiny_model_folder):
    rule = (
        'calibration = { judge = "tiny-judge", layers = [0, 1], strengths = [0.5, 1.0], '
        "floor = 0.0, prompts = 2, generation = { max_new_tokens = 4, temperature = 0.8 } }"
    )
    design = inline_design(tmp_path, tiny_model_folder, rule)
    asked: list[str] = []
    lonely = make(design, tmp_path / "run", tiny_model_folder, asked)["lonely"]
    assert asked == ["tiny-judge"]
    assert lonely.steer.layers[0] in (0, 1) and lonely.steer.strength in (0.5, 1.0)
    assert lonely.calibration["judge"] == "tiny-judge" and "rule" in lonely.calibration
    assert (tmp_path / "run" / "profiles" / "lonely.calibration" / "sweep.csv").is_file()


def test_judge_scores_are_read_from_the_rubric(monkeypatch):
    import rubric.entry_scores

    seen = []

    def fake_score_entry(judge, text, *, patterns, floor):
        assert floor == 0.5  # the judges' default floor when none is given
        seen.append((judge, text, patterns[0][0]))
        pattern = SimpleNamespace(mean=None if "?" in text else 70.0)
        return SimpleNamespace(
            pattern={"entitlement": pattern}, coherence=SimpleNamespace(mean=80.0)
        )

    monkeypatch.setattr(rubric.entry_scores, "score_entry", fake_score_entry)
    scorer = judge_scorer("the-judge", load_pattern("entitlement"))  # type: ignore[arg-type]
    good, unreadable, empty = scorer(["A day.", "Why?", "  "])
    assert (good.pattern, good.coherence) == (70.0, 80.0)
    assert unreadable.pattern != unreadable.pattern  # NaN: unreadable is kept as unreadable
    assert (empty.pattern, empty.coherence) == (0.0, 0.0)
    assert seen == [("the-judge", "A day.", "entitlement"), ("the-judge", "Why?", "entitlement")]


def test_an_inline_profile_is_not_made_without_a_run(tmp_path, tiny_model_folder):
    from foundation.errors import LabError

    design = inline_design(tmp_path, tiny_model_folder, "steer = { layers = [1], strength = 0.5 }")
    with pytest.raises(LabError, match="made by a run"):
        resolve_profiles(design, ["lonely"])
