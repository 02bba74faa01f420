"""Preregistered hypotheses: a contrast the lab knows how to compute per diarist, a predicted
direction, and the judges that must agree.

A contrast is a table with a `kind` (the schema below is the whole language):

    contrast = { kind = "first_entry_pattern", profile = "steered" }
    contrast = { kind = "coherence", profile = "steer_isolation" }
    contrast = { kind = "drift", chatbot = "frontier-a", entry = 4, baseline = "thanks" }

Every contrast is computed per diarist (so it can be bootstrapped over diarists) and always
against the same diarist unsteered. A judge supports a hypothesis when its 95% interval lies
wholly on the predicted side of zero; the hypothesis is "supported" only if every listed judge
supports it, "not supported" if none does, and "mixed" otherwise. A contrast outside the schema,
or naming a judge, profile or chatbot the design lacks, is refused when the design is read, not
after a run."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from experiments.analysis import paired
from experiments.analysis.bootstrap import Interval, cluster_bootstrap, mean_of
from experiments.analysis.comparisons import BootstrapSettings
from experiments.analysis.hypothesis_schema import (
    MINUS,
    STEERED,
    SUPPORTED_CONTRASTS,
    Contrast,
    DriftContrast,
    Hypotheses,
    Hypothesis,
    SteeringContrast,
    UnknownName,
    parse_hypotheses,
    unique_ids,
)
from foundation.errors import LabError

__all__ = [
    "MINUS",
    "STEERED",
    "SUPPORTED_CONTRASTS",
    "Contrast",
    "DriftContrast",
    "Hypotheses",
    "Hypothesis",
    "HypothesisResult",
    "JudgeVerdict",
    "SteeringContrast",
    "UnknownName",
    "evaluate",
    "overall_verdict",
    "parse_hypotheses",
    "results_table",
    "unique_ids",
]


@dataclass(frozen=True)
class JudgeVerdict:
    judge: str
    interval: Interval
    supports: bool | None  # None: no data for this judge
    sources: tuple[str, ...]


@dataclass(frozen=True)
class HypothesisResult:
    hypothesis: Hypothesis
    verdicts: tuple[JudgeVerdict, ...]
    overall: str  # "supported" | "not supported" | "mixed"


def per_diarist(contrast: Contrast, entries: pd.DataFrame, judge: str) -> pd.DataFrame:
    """The contrast's value for each diarist under one judge (column 'diff', with sources)."""
    if isinstance(contrast, DriftContrast):
        return paired.drift(
            entries,
            judge,
            contrast.profile_id,
            contrast.chatbot,
            contrast.entry,
            contrast.baseline,
        )
    if contrast.kind == "first_entry_pattern":
        return paired.first_entry_steering(entries, judge, contrast.profile_id)
    return paired.quality(entries, judge, contrast.profile_id, contrast.kind)


def _check_run_names(hypothesis: Hypothesis, entries: pd.DataFrame) -> None:
    """A name the run does not contain would silently yield 'no data'; say so instead."""
    c, where = hypothesis.contrast, f"hypothesis {hypothesis.id}"
    named: list[tuple[str, str | None]] = [("profile", c.profile_id)]
    if isinstance(c, DriftContrast):
        named += [("chatbot", c.chatbot), ("chatbot", c.baseline)]
    for column, value in named + [("judge", j) for j in hypothesis.judges]:
        if value is not None and value not in set(entries[column].astype(str)):
            present = ", ".join(sorted(set(entries[column].astype(str))))
            raise LabError(
                f"names {column} {value!r}, which this run does not contain",
                where=where,
                fix=f"use one of {present}",
            )


def overall_verdict(supports: Sequence[bool | None]) -> str:
    """Every judge must support it; a judge without data does not support it."""
    if supports and all(s is True for s in supports):
        return "supported"
    if not any(s is True for s in supports):
        return "not supported"
    return "mixed"


def evaluate(
    hypotheses: Sequence[Hypothesis], entries: pd.DataFrame, settings: BootstrapSettings
) -> tuple[HypothesisResult, ...]:
    results = []
    for hypothesis in hypotheses:
        _check_run_names(hypothesis, entries)
        verdicts = []
        for judge in hypothesis.judges:
            table = per_diarist(hypothesis.contrast, entries, judge)
            interval = cluster_bootstrap(
                table,
                mean_of("diff"),
                resamples=settings.resamples,
                seed=settings.seed,
                level=settings.level,
                method=settings.method,
            )
            defined = bool(pd.notna(interval.low) and pd.notna(interval.high))
            supports = interval.excludes_zero(hypothesis.direction) if defined else None
            sources = tuple(sorted(set().union(*table["sources"]))) if len(table) else ()
            verdicts.append(JudgeVerdict(judge, interval, supports, sources))
        overall = overall_verdict([v.supports for v in verdicts])
        results.append(HypothesisResult(hypothesis, tuple(verdicts), overall))
    return tuple(results)


RESULT_COLUMNS = [
    "id", "contrast", "direction", "judge", "estimate", "low", "high", "n_diarists",
    "judge_verdict", "overall", "sources",
]  # fmt: skip


def results_table(results: Sequence[HypothesisResult]) -> pd.DataFrame:
    """One row per hypothesis × judge, with the overall verdict repeated beside each."""
    rows = [
        {"id": r.hypothesis.id, "contrast": r.hypothesis.contrast.formula()}
        | {"direction": r.hypothesis.direction, "judge": v.judge}
        | {"estimate": v.interval.estimate, "low": v.interval.low, "high": v.interval.high}
        | {"n_diarists": v.interval.clusters}
        | {"judge_verdict": {True: "supports", False: "does not", None: "no data"}[v.supports]}
        | {"overall": r.overall, "sources": v.sources}
        for r in results
        for v in r.verdicts
    ]
    return pd.DataFrame(rows, columns=RESULT_COLUMNS)
