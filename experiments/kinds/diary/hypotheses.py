"""Preregistered hypotheses: a contrast the lab knows how to compute per diarist, a predicted
direction, and the judges (every judge of the design) that must agree.

A contrast is a table with a `kind` (the schema in contrasts.py is the whole language):

    contrast = { kind = "first_entry_pattern", profile = "steered" }
    contrast = { kind = "coherence", profile = "steer_isolation" }
    contrast = { kind = "drift_change", chatbot = "frontier-a", entry = 4, baseline = "thanks" }

Every contrast is computed per diarist, against the same diarist unsteered. The verdict comes
from the shared evaluator (experiments/analysis/hypotheses.py): the exact sign-flip test on the
per-diarist values, decided by the design's rule (experiments/analysis/rules.py: the lab's
"holm" by default — the two-sided p Holm-adjusted across the design's hypotheses, per judge —
or "intervals"), the other rule kept as a sensitivity; the 95% sign-flip interval is shown.
Per judge: supported or contradicted (the observed sign names which), inconclusive, or "too few
diarists" (fewer than the design's minimum: no verdict). Overall: the judges' common verdict,
inconclusive when they differ. A contrast outside the schema, or naming a judge, profile or
chatbot the design lacks, is refused when the design is read, not after a run."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import pandas as pd

from diarylab.experiments.analysis.bootstrap import BootstrapSettings
from diarylab.experiments.analysis.hypotheses import (
    ClusterValues,
    HypothesisVerdict,
    evaluate_family,
)
from diarylab.experiments.analysis.hypothesis_table import results_table as shared_results_table
from diarylab.experiments.analysis.rules import Rule
from diarylab.experiments.analysis.verdicts import ALPHA, MIN_CLUSTERS
from diarylab.experiments.kinds.diary import paired
from diarylab.experiments.kinds.diary.contrasts import Contrast, DriftContrast, Hypothesis
from diarylab.foundation.errors import LabError

if TYPE_CHECKING:
    from diarylab.experiments.kinds.diary.frames import AnalysisTables

HypothesisResult = HypothesisVerdict[Hypothesis]


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


def evaluate(
    hypotheses: Sequence[Hypothesis],
    entries: pd.DataFrame,
    settings: BootstrapSettings,
    *,
    min_diarists: int = MIN_CLUSTERS,
    alpha: float = ALPHA,
    rule: Rule = "holm",
) -> tuple[HypothesisResult, ...]:
    """Every hypothesis under each of its judges, through the shared evaluator
    (experiments/analysis/hypotheses.py), decided by `rule`."""
    for hypothesis in hypotheses:
        _check_run_names(hypothesis, entries)
    values = {}
    for h in hypotheses:
        for judge in h.judges:
            table = per_diarist(h.contrast, entries, judge)
            sources = set().union(*table["sources"]) if len(table) else set()
            values[(h.id, judge)] = ClusterValues(
                tuple(table["diff"].astype(float)), tuple(sorted(sources))
            )
    return evaluate_family(
        hypotheses,
        values,
        min_clusters=min_diarists,
        rule=rule,
        alpha=alpha,
        seed=settings.seed,
    )


def results_table(results: Sequence[HypothesisResult]) -> pd.DataFrame:
    """One row per hypothesis × judge (columns: experiments.analysis.hypotheses)."""
    return shared_results_table(results, clusters="diarists", cluster_word="diarists")


def hypothesis_table(
    tables: AnalysisTables,
    design: Mapping[str, Any],
    settings: BootstrapSettings,
    min_diarists: int = MIN_CLUSTERS,
    rule: Rule = "holm",
) -> pd.DataFrame:
    """The preregistered hypotheses' verdicts per judge (the report's and open_run's): here,
    apart from the report's module, so reading verdicts loads no model code."""
    from diarylab.experiments.kinds.diary.contrasts import parse_hypotheses

    hypotheses = parse_hypotheses(design, "design")
    verdicts = evaluate(hypotheses, tables.entries, settings, min_diarists=min_diarists, rule=rule)
    return results_table(verdicts)
