"""Making a design's inline profiles inside a run folder (extraction, then a fixed setting or a
calibration with one of the design's judges), once; and the judge scorer calibration uses."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from diarylab.diarists.patterns import load_pattern
from diarylab.experiments.designs.opening import load_design
from diarylab.experiments.engine.store import Store
from diarylab.experiments.profiles.making import InlineProfiles
from diarylab.experiments.profiles.refs import resolve_profiles
from diarylab.experiments.profiles.vectors import judge_scorer
from diarylab.model_access.local import LocalModel
from diarylab.model_access.settings import LocalSettings
from diarylab.rubric.judging.building import build_judge
from diarylab.rubric.judging.judge_base import Judge
from diarylab.rubric.judging.local_judge import LocalJudge
from diarylab.testing.lab_fixtures import design_text

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
    folder = tmp_path / "run" / "profiles"
    assert (folder / "lonely.calibration" / "sweep.csv").is_file()
    # Every call made on the way is in the profile maker's store: 2 pairs, 2 prompts × (the
    # baseline + 4 settings) samples, and their judge readings.
    store = Store(folder / "store.sqlite")
    kinds = Counter(kind for _, kind, *_ in store.calls_of())
    assert kinds["diarist"] == 2 * 2 + 2 * 5 and kinds["judge"] > 0
    calls = store.count("calls")
    store.close()
    # Made again from the store (as after a kill during calibration, before the profile file
    # was written): no call is made, the judge is not even built, and the choice is the same.
    (folder / "lonely.toml").unlink()
    again = make(design, tmp_path / "run", tiny_model_folder, asked)["lonely"]
    assert asked == ["tiny-judge"]
    assert again.spec() == lonely.spec() and again.calibration == lonely.calibration
    store = Store(folder / "store.sqlite")
    assert store.count("calls") == calls


class Batched(Judge):
    """A judge that reads four prompts per call and records each call's batch."""

    def __init__(self, inner: Judge) -> None:
        self.inner, self.batches = inner, []

    def identity(self):
        return self.inner.identity()

    @property
    def batch_size(self) -> int:
        return 4

    def records(self, question, prompts):
        self.batches.append(len(prompts))
        return self.inner.records(question, prompts)


def test_judge_scorer_batches_through_the_store_and_reads_back(tmp_path, tiny_model):
    judge = Batched(LocalJudge(tiny_model))
    built = []

    def get_judge():
        built.append(1)
        return judge

    store = Store(tmp_path / "store.sqlite")
    pattern = load_pattern("entitlement")
    scorer = judge_scorer(store, "the-judge", get_judge, pattern, floor=0.0)
    texts = ["A day of work.", "  ", "A day of work.", "Lunch."]
    first = scorer(texts)
    # 2 distinct texts × (pattern, coherence) in one call; the empty text asks nothing.
    assert judge.batches == [4] and built == [1]
    assert (first[1].pattern, first[1].coherence) == (0.0, 0.0)
    assert first[0] == first[2] and all(0 <= s.pattern <= 100 for s in first)
    items = {i for (i,) in store.select("judgments", ["item"])}
    assert items == {"pattern:entitlement", "coherence"}  # realism is not asked
    assert store.count("judgments", where={"target_kind": "sample"}) == 4
    # Read back: no judge built, no call made, the same scores.
    again = judge_scorer(store, "the-judge", get_judge, pattern, floor=0.0)(texts)
    assert again == first and built == [1] and judge.batches == [4]
    # Under the coverage floor a reading is unreadable: NaN, never a number.
    strict = Store(tmp_path / "strict.sqlite")
    [unreadable] = judge_scorer(strict, "the-judge", get_judge, pattern, floor=1.0)(["Lunch."])
    assert unreadable.pattern != unreadable.pattern


def test_an_inline_profile_is_not_made_without_a_run(tmp_path, tiny_model_folder):
    from diarylab.foundation.errors import LabError

    design = inline_design(tmp_path, tiny_model_folder, "steer = { layers = [1], strength = 0.5 }")
    with pytest.raises(LabError, match="made by a run"):
        resolve_profiles(design, ["lonely"])


def test_calibration_samples_are_written_at_the_study_writing_settings(tmp_path, tiny_model_folder):
    """A rule that sets no generation writes its samples as the study writes its entries (the
    design's [diarist_model] generation: 8 tokens at 0.9 here), not at the schema's extraction
    defaults (80 tokens at 0.8); the extraction pairs keep their own settings."""

    rule = (
        'calibration = { judge = "tiny-judge", layers = [0], strengths = [0.5], floor = 0.0, '
        "prompts = 2 }"
    )
    design = inline_design(tmp_path, tiny_model_folder, rule)
    lonely = make(design, tmp_path / "run", tiny_model_folder, [])["lonely"]
    store = Store(tmp_path / "run" / "profiles" / "store.sqlite")
    requests = [json.loads(c[3]) for c in store.calls_of(["diarist"])]
    store.close()
    settings = sorted(
        (r["generation"]["max_new_tokens"], r["generation"]["temperature"]) for r in requests
    )
    # 2 extraction pairs (5 tokens, 0.8), then 2 prompts × (the baseline + 1 setting).
    assert settings == [(5, 0.8)] * 4 + [(8, 0.9)] * 4
    assert json.loads(lonely.calibration["sample_generation"])["max_new_tokens"] == 8


def test_the_plan_counts_what_making_the_profile_takes(tmp_path, tiny_model_folder):
    """The plan's profile work (contrast texts, calibration samples, the judge's readings of
    them) against what making the profile stored: texts exactly, readings at most (an empty or
    repeated sample is not read again)."""
    from diarylab.experiments.planning.plan import plan_design

    rule = (
        'calibration = { judge = "tiny-judge", layers = [0], strengths = [0.5, 0.0], floor = 0.0, '
        "prompts = 2 }"
    )
    design = inline_design(tmp_path, tiny_model_folder, rule)
    plan = plan_design(design)
    texts = {t.label: count for t, count in plan.texts() if t.phase == "profiles"}
    assert texts == {"contrast texts for lonely": 4, "calibration samples for lonely": 4}
    [judge] = [j for j in plan.judges if j.judge == "tiny-judge"]
    assert judge.profile_readings == 8
    run_texts = sum(count for t, count in plan.texts() if t.phase != "profiles")
    w = plan.workload  # the run's progress total leaves profile making out
    assert w.units(len(plan.judges)) == run_texts + len(plan.judges) * w.progress_readings
    make(design, tmp_path / "run", tiny_model_folder, [])
    store = Store(tmp_path / "run" / "profiles" / "store.sqlite")
    written = store.count("calls", where={"kind": "diarist"})
    read = store.count("calls", where={"kind": "judge"})
    store.close()
    assert written == sum(texts.values())
    assert 0 < read <= judge.profile_readings
