"""Extraction and calibration wired to the lab's pattern files, judges and store: the functions
both `diarylab steer` and a run's inline profile rules use. steering/ knows neither patterns,
judges nor the store (it does the vector maths and the sweep's choice); this is where they meet.
Every text is written through the store's cached-call door (experiments/engine/writes.py
`StoreWrites`) and every judge reading goes through the shared judging phase (`judge_tasks`), so
a killed extraction or calibration resumes with the calls it made, and calibration's samples
reach the judge in batches like any other judging phase's."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from tqdm.auto import tqdm

from diarylab.diarists.patterns import Pattern
from diarylab.experiments.engine.judging import judge_tasks, judgment_id
from diarylab.experiments.engine.store import JudgmentRow, Store
from diarylab.experiments.engine.tasks import Task
from diarylab.experiments.engine.writes import StoreWrites
from diarylab.foundation.errors import LabError
from diarylab.model_access.local import LocalModel
from diarylab.model_access.settings import GenerationSettings
from diarylab.rubric.entry_scores import EntryTemplates, entry_prompts
from diarylab.rubric.judging.expected import DEFAULT_FLOOR
from diarylab.rubric.judging.judge_base import Judge
from diarylab.rubric.prompts import text_sha256
from diarylab.steering.calibrate import Calibration, heuristic_scorer, sweep
from diarylab.steering.extract import Extraction, Scorer, TextScore, extract_vector
from diarylab.steering.settings import CalibrationRule, ExtractionSettings, SteerSettings
from diarylab.steering.vectors import PatternVector

FAKE_JUDGE = "fake"


# ----------------------------------------------------------------------------- scoring
def judge_scorer(
    store: Store,
    judge_id: str,
    get_judge: Callable[[], Judge],
    pattern: Pattern,
    *,
    floor: float | None = None,
    progress: bool = False,
) -> Scorer:
    """A scorer reading a judge's pattern and coherence scores for a batch of texts through the
    store's judging phase: each reading is stored (as a judgment row of target kind "sample",
    keyed by the text's sha256) before it is used, and read back on resume; the judge is built
    only when a reading is missing. Readings under the coverage `floor` (default: the judges'
    default) are unreadable (NaN), never replaced. `judge_id` must name one judge identity in
    this store (a design's judge id; the command line derives one from the judge's identity)."""
    templates = EntryTemplates.load()
    # A sample is read for the pattern and coherence only: those are what the choice uses.
    spec_of_pattern = [(pattern.id, pattern.name, pattern.definition)]
    items = (f"pattern:{pattern.id}", "coherence")
    refs = {items[0]: templates.pattern.ref, "coherence": templates.coherence.ref}
    reading_floor = DEFAULT_FLOOR if floor is None else floor

    def score(texts: Sequence[str]) -> list[TextScore]:
        tasks: dict[str, tuple[Task, Task]] = {}  # each distinct non-empty text once
        for text in texts:
            if text.strip() and text not in tasks:
                prompts = entry_prompts(text, spec_of_pattern, templates)
                target = text_sha256(text)
                pattern_task, coherence_task = (
                    Task("sample", target, i, "number", prompts[i], refs[i]) for i in items
                )
                tasks[text] = (pattern_task, coherence_task)
        total = 2 * len(tasks)
        bar = tqdm(
            total=total,
            desc="calibrating: judging the samples",
            unit="reading",
            disable=not progress,
        )
        try:
            flat = [t for pair in tasks.values() for t in pair]
            judge_tasks(store, judge_id, get_judge, flat, reading_floor, bar.update)
        finally:
            bar.close()
        out = []
        for text in texts:
            if text not in tasks:  # the judge refuses empty entries; they carry no pattern
                out.append(TextScore(pattern=0.0, coherence=0.0))
                continue
            pattern_task, coherence_task = tasks[text]
            out.append(
                TextScore(
                    _value(store, judge_id, pattern_task), _value(store, judge_id, coherence_task)
                )
            )
        return out

    return score


def _value(store: Store, judge_id: str, task: Task) -> float:
    """A stored reading's expected number; NaN when unreadable (below the coverage floor),
    which calibration leaves out of its means rather than replacing."""
    row = store.get(JudgmentRow, judgment_id(judge_id, task))
    if row is None:
        raise RuntimeError(f"no stored judgment {judgment_id(judge_id, task)}")
    return float("nan") if row.value is None else float(row.value)


def fake_scorer(pattern: Pattern) -> Scorer:
    """The word-counting heuristic: NOT a judge; for demos only (it calls no model)."""
    return heuristic_scorer(pattern.markers)


@contextmanager
def _writes(
    store: Store, model: LocalModel, batch_size: int, what: str, progress: bool, total: int
) -> Iterator[StoreWrites]:
    """The store's write door with a progress bar of its own, named, with its total."""
    bar = tqdm(desc=what, total=total, unit="text", disable=not progress)
    try:
        yield StoreWrites(store, model, batch_size=batch_size, done=bar.update)
    finally:
        bar.close()


# ----------------------------------------------------------------------------- extraction
def extract_pattern(
    model: LocalModel,
    pattern: Pattern,
    settings: ExtractionSettings,
    *,
    seed: int,
    store: Store,
    scorer: Scorer | None = None,
    progress: bool = True,
) -> Extraction:
    """A pattern's vector on a model, from the pattern file's contrast set; the pairs are
    written through `store`."""
    texts = 2 * settings.pairs  # a positive and a negative text per pair
    with _writes(
        store, model, settings.batch_size, "extracting: contrast texts", progress, texts
    ) as writes:
        return extract_vector(
            model,
            pattern_id=pattern.id,
            pattern_sha256=pattern.sha256,
            positive_system=pattern.positive_system,
            negative_system=pattern.negative_system,
            prompts=pattern.extraction_prompts,
            settings=settings.generation,
            seed=seed,
            writes=writes,
            pairs=settings.pairs,
            batch_size=settings.batch_size,
            scorer=scorer,
            progress=progress,
        )


def study_rule(rule: CalibrationRule, writing: GenerationSettings) -> CalibrationRule:
    """The rule as a design's inline profile runs it: its samples are written at the study's own
    writing settings (the design's [diarist_model] generation) unless the rule sets its own. A
    sweep at the schema's short extraction settings (80 tokens, 0.8) would choose a strength for
    text the study never writes: coherence falls with length and temperature."""
    if "generation" in rule.model_fields_set:
        return rule
    return rule.model_copy(update={"generation": writing})


def calibrate_pattern(
    model: LocalModel,
    vector: PatternVector,
    pattern: Pattern,
    rule: CalibrationRule,
    scorer: Scorer,
    *,
    seed: int,
    store: Store,
    progress: bool = True,
) -> Calibration:
    """The rule's sweep on the pattern's held-out prompts, its samples written through `store`
    (`scorer` is judge_scorer on the same store, or the fake heuristic)."""
    count = len(pattern.heldout_prompts) if rule.prompts is None else rule.prompts
    if count > len(pattern.heldout_prompts):
        raise LabError(
            f"{count} prompts asked, the pattern has {len(pattern.heldout_prompts)} held out",
            where="calibration.prompts",
            fix=f"ask for at most {len(pattern.heldout_prompts)}",
        )
    for layer in rule.layers:
        vector.check_layer(layer, where="calibration.layers")
    prompts = [
        [{"role": "system", "content": pattern.eval_system}, {"role": "user", "content": p}]
        for p in pattern.heldout_prompts[:count]
    ]
    nonzero = sum(1 for s in rule.strengths if s != 0)
    samples = len(prompts) * (1 + len(rule.layers) * nonzero)  # the unsteered baseline once
    with _writes(
        store, model, rule.batch_size, "calibrating: samples", progress, samples
    ) as writes:
        return sweep(
            model,
            vector,
            prompts,
            layers=rule.layers,
            strengths=rule.strengths,
            scorer=scorer,
            writes=writes,
            settings=rule.generation,
            seed=seed,
            floor=rule.floor,
            scale=rule.scale,
            positions=rule.positions,
        )


def chosen_setting(result: Calibration, rule: CalibrationRule, out: Path) -> SteerSettings:
    chosen = result.chosen
    if chosen is None:
        raise LabError(
            f"no steered setting kept mean coherence ≥ {rule.floor} (table and plot are in {out})",
            where="calibration",
            fix="try smaller strengths, other layers, or a lower floor",
        )
    return SteerSettings(
        layers=[chosen.layer], strength=chosen.strength, scale=rule.scale, positions=rule.positions
    )
