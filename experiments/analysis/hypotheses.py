"""Preregistered hypotheses: a contrast the lab knows how to compute per diarist, a predicted
direction, and the judges (every judge of the design) that must agree.

A contrast is a table with a `kind` (the schema in hypothesis_schema.py is the whole language):

    contrast = { kind = "first_entry_pattern", profile = "steered" }
    contrast = { kind = "coherence", profile = "steer_isolation" }
    contrast = { kind = "drift_change", chatbot = "frontier-a", entry = 4, baseline = "thanks" }

Every contrast is computed per diarist, against the same diarist unsteered. The verdict comes
from the exact sign-flip test on the per-diarist values (experiments/analysis/verdicts.py), its
two-sided p Holm-adjusted across the design's hypotheses, per judge; the BCa interval is shown
beside it, not read. Per judge: supported or contradicted (adjusted p < 0.05, the observed sign
names which), inconclusive, or "too few diarists" (fewer than the design's minimum: no verdict).
Overall: the judges' common verdict, inconclusive when they differ. A contrast outside the
schema, or naming a judge, profile or chatbot the design lacks, is refused when the design is
read, not after a run."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
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
from experiments.analysis.verdicts import (
    ALPHA,
    MIN_CLUSTERS,
    SignFlip,
    Verdict,
    decide,
    holm,
    minimum_detectable_effect,
    overall,
    sign_flip,
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
    "parse_hypotheses",
    "results_table",
    "unique_ids",
]


@dataclass(frozen=True)
class JudgeVerdict:
    judge: str
    interval: Interval  # BCa, for display
    test: SignFlip  # what the verdict is read from
    sd: float  # per-diarist SD of the contrast (ddof 1)
    p_holm: float  # the two-sided p, Holm-adjusted across the hypotheses of this judge
    mde: float  # minimum detectable effect at alpha/m (Holm's first step), 80% power
    verdict: Verdict
    sources: tuple[str, ...]


@dataclass(frozen=True)
class HypothesisResult:
    hypothesis: Hypothesis
    verdicts: tuple[JudgeVerdict, ...]
    overall: Verdict


def per_diarist(contrast: Contrast, entries: pd.DataFrame, judge: str) -> pd.DataFrame:
    """The contrast's value for each diarist under one judge (column 'diff', with sources)."""
    if isinstance(contrast, DriftContrast):
        c = contrast
        if c.kind == "steered_vs_baseline" and c.baseline is not None:
            return paired.steered_vs_baseline(
                entries, judge, c.profile_id, c.chatbot, c.entry, c.baseline
            )
        function = paired.drift_change if c.kind == "drift_change" else paired.drift
        return function(entries, judge, c.profile_id, c.chatbot, c.entry, c.baseline)
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


@dataclass(frozen=True)
class _Reading:
    table: pd.DataFrame
    interval: Interval
    test: SignFlip
    sd: float


def _read(
    hypothesis: Hypothesis, judge: str, entries: pd.DataFrame, settings: BootstrapSettings
) -> _Reading:
    table = per_diarist(hypothesis.contrast, entries, judge)
    interval = cluster_bootstrap(
        table,
        mean_of("diff"),
        resamples=settings.resamples,
        seed=settings.seed,
        level=settings.level,
        method=settings.method,
    )
    diffs = table["diff"].astype(float).dropna().to_numpy()
    sd = float(np.std(diffs, ddof=1)) if len(diffs) >= 2 else math.nan
    return _Reading(table, interval, sign_flip(diffs, seed=settings.seed), sd)


def evaluate(
    hypotheses: Sequence[Hypothesis],
    entries: pd.DataFrame,
    settings: BootstrapSettings,
    *,
    min_diarists: int = MIN_CLUSTERS,
    alpha: float = ALPHA,
) -> tuple[HypothesisResult, ...]:
    """Every hypothesis under each of its judges. A judge's family is the hypotheses that name
    it (every hypothesis, in a checked design): their two-sided sign-flip p-values are
    Holm-adjusted together, and the minimum detectable effect is at Holm's first step."""
    for hypothesis in hypotheses:
        _check_run_names(hypothesis, entries)
    readings = {
        (h.id, judge): _read(h, judge, entries, settings) for h in hypotheses for judge in h.judges
    }
    adjusted: dict[tuple[str, str], float] = {}
    family_size: dict[str, int] = {}
    for judge in sorted({j for h in hypotheses for j in h.judges}):
        keys = [(h.id, judge) for h in hypotheses if judge in h.judges]
        adjusted |= dict(zip(keys, holm([readings[k].test.p_two_sided for k in keys]), strict=True))
        family_size[judge] = len(keys)
    results = []
    for h in hypotheses:
        verdicts = []
        for judge in h.judges:
            r, p_holm = readings[(h.id, judge)], adjusted[(h.id, judge)]
            verdict = decide(r.test, p_holm, h.direction, min_clusters=min_diarists, alpha=alpha)
            mde = minimum_detectable_effect(r.sd, r.test.n, alpha=alpha / family_size[judge])
            sources = tuple(sorted(set().union(*r.table["sources"]))) if len(r.table) else ()
            verdicts.append(
                JudgeVerdict(judge, r.interval, r.test, r.sd, p_holm, mde, verdict, sources)
            )
        results.append(HypothesisResult(h, tuple(verdicts), overall([v.verdict for v in verdicts])))
    return tuple(results)


RESULT_COLUMNS = [
    "id", "contrast", "direction", "judge", "estimate", "low", "high", "n_diarists", "sd",
    "p", "p_holm", "mde", "judge_verdict", "overall", "sources",
]  # fmt: skip


def results_table(results: Sequence[HypothesisResult]) -> pd.DataFrame:
    """One row per hypothesis × judge, with the overall verdict repeated beside each. `p` is
    the raw two-sided sign-flip p, `p_holm` the adjusted one the verdict uses."""
    rows: list[dict[str, object]] = [
        {"id": r.hypothesis.id, "contrast": r.hypothesis.contrast.formula()}
        | {"direction": r.hypothesis.direction, "judge": v.judge}
        | {"estimate": v.interval.estimate, "low": v.interval.low, "high": v.interval.high}
        | {"n_diarists": v.test.n, "sd": v.sd, "p": v.test.p_two_sided, "p_holm": v.p_holm}
        | {"mde": v.mde, "judge_verdict": v.verdict, "overall": r.overall, "sources": v.sources}
        for r in results
        for v in r.verdicts
    ]
    return pd.DataFrame(rows, columns=RESULT_COLUMNS)
