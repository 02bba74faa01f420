"""Extraction and calibration wired to the lab's pattern files and judges: the functions both
`diarylab steer` and a run's inline profile rules use. steering/ knows neither patterns nor
judges; this is where they meet."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from diarists.patterns import Pattern
from foundation.errors import LabError
from model_access.local import LocalModel
from rubric.expected import DEFAULT_FLOOR
from rubric.judge_base import Judge
from steering.calibrate import Calibration, heuristic_scorer, sweep
from steering.extract import Extraction, Scorer, TextScore, extract_vector
from steering.settings import CalibrationRule, ExtractionSettings, SteerSettings
from steering.vectors import PatternVector

FAKE_JUDGE = "fake"


# ----------------------------------------------------------------------------- scoring
def judge_scorer(judge: Judge, pattern: Pattern, *, floor: float | None = None) -> Scorer:
    """A scorer reading a judge's pattern and coherence scores for one entry at a time;
    readings under the coverage `floor` (default: the judges' default) are unreadable."""
    from rubric.entry_scores import score_entry

    spec_of_pattern = [(pattern.id, pattern.name, pattern.definition)]

    def score(texts: Sequence[str]) -> list[TextScore]:
        out = []
        for text in texts:
            if not text.strip():  # the judge refuses empty entries; they carry no pattern
                out.append(TextScore(pattern=0.0, coherence=0.0))
                continue
            scores = score_entry(
                judge,
                text,
                patterns=spec_of_pattern,
                floor=DEFAULT_FLOOR if floor is None else floor,
            )
            out.append(TextScore(_mean(scores.pattern[pattern.id]), _mean(scores.coherence)))
        return out

    return score


def fake_scorer(pattern: Pattern) -> Scorer:
    """The word-counting heuristic: NOT a judge; for demos only."""
    return heuristic_scorer(pattern.markers)


def _mean(reading: object) -> float:
    """A reading's expected number; NaN when unreadable (below the coverage floor), which
    calibration leaves out of its means rather than replacing."""
    value = getattr(reading, "mean", None)
    return float("nan") if value is None else float(value)


# ----------------------------------------------------------------------------- extraction
def extract_pattern(
    model: LocalModel,
    pattern: Pattern,
    settings: ExtractionSettings,
    *,
    seed: int,
    scorer: Scorer | None = None,
    progress: bool = True,
) -> Extraction:
    """A pattern's vector on a model, from the pattern file's contrast set."""
    return extract_vector(
        model,
        pattern_id=pattern.id,
        pattern_sha256=pattern.sha256,
        positive_system=pattern.positive_system,
        negative_system=pattern.negative_system,
        prompts=pattern.extraction_prompts,
        settings=settings.generation,
        seed=seed,
        pairs=settings.pairs,
        batch_size=settings.batch_size,
        scorer=scorer,
        progress=progress,
    )


def calibrate_pattern(
    model: LocalModel,
    vector: PatternVector,
    pattern: Pattern,
    rule: CalibrationRule,
    scorer: Scorer,
    *,
    seed: int,
    progress: bool = True,
) -> Calibration:
    """The rule's sweep on the pattern's held-out prompts."""
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
        model.chat_ids(
            [{"role": "system", "content": pattern.eval_system}, {"role": "user", "content": p}]
        )
        for p in pattern.heldout_prompts[:count]
    ]
    return sweep(
        model,
        vector,
        prompts,
        layers=rule.layers,
        strengths=rule.strengths,
        scorer=scorer,
        settings=rule.generation,
        seed=seed,
        floor=rule.floor,
        scale=rule.scale,
        positions=rule.positions,
        batch_size=rule.batch_size,
        progress=progress,
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
