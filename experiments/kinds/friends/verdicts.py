"""The friends kind's hypotheses evaluated with the lab's verdict machinery
(experiments/analysis/verdicts.py): per judge, each hypothesis's per-card contrast gets the exact
sign-flip test; the raw two-sided p-values of the design's hypotheses that list a judge are
Holm-adjusted together (per judge, never across judges); `decide` gives that judge's verdict and
`overall` requires every listed judge to give the same one. The interval shown is the sign-flip
test inverted (the set of effects the test does not reject at 95%, unadjusted), and the
minimum detectable effect is at Holm's first step (alpha / number of hypotheses)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from experiments.analysis.verdicts import (
    ALPHA,
    Verdict,
    decide,
    holm,
    minimum_detectable_effect,
    overall,
    sign_flip,
    sign_flip_interval,
)
from experiments.kinds.friends.contrast import FriendsHypothesis
from experiments.kinds.friends.outcomes import per_card


@dataclass(frozen=True)
class JudgeResult:
    judge: str
    n_cards: int
    estimate: float
    low: float
    high: float
    p_raw: float
    p_holm: float
    verdict: Verdict
    mde: float
    sources: tuple[str, ...]


@dataclass(frozen=True)
class HypothesisResult:
    hypothesis: FriendsHypothesis
    judges: tuple[JudgeResult, ...]
    overall: Verdict


def evaluate(
    hypotheses: Sequence[FriendsHypothesis], outcomes: pd.DataFrame, *, seed: int = 0
) -> tuple[HypothesisResult, ...]:
    tables = {
        (h.id, judge): per_card(h.contrast, outcomes, judge)
        for h in hypotheses
        for judge in h.judges
    }
    tests = {key: sign_flip(table["diff"].tolist(), seed=seed) for key, table in tables.items()}
    adjusted: dict[tuple[str, str], float] = {}
    for judge in sorted({j for h in hypotheses for j in h.judges}):
        keys = [(h.id, judge) for h in hypotheses if judge in h.judges]
        for key, p in zip(keys, holm([tests[k].p_two_sided for k in keys]), strict=True):
            adjusted[key] = p
    family = {judge: sum(judge in h.judges for h in hypotheses) for _, judge in adjusted}
    results = []
    for h in hypotheses:
        rows = []
        for judge in h.judges:
            key = (h.id, judge)
            test, diffs = tests[key], tables[key]["diff"].dropna().tolist()
            low, high = sign_flip_interval(diffs, seed=seed)
            sd = float(np.std(diffs, ddof=1)) if len(diffs) > 1 else math.nan
            rows.append(
                JudgeResult(
                    judge=judge,
                    n_cards=test.n,
                    estimate=test.mean,
                    low=low,
                    high=high,
                    p_raw=test.p_two_sided,
                    p_holm=adjusted[key],
                    verdict=decide(test, adjusted[key], h.direction),
                    mde=minimum_detectable_effect(sd, test.n, alpha=ALPHA / family[judge]),
                    sources=tuple(sorted({i for ids in tables[key]["sources"] for i in ids})),
                )
            )
        results.append(HypothesisResult(h, tuple(rows), overall([r.verdict for r in rows])))
    return tuple(results)


RESULT_COLUMNS = [
    "id", "says", "contrast", "direction", "judge", "n_cards", "estimate", "low", "high",
    "p_raw", "p_holm", "mde", "judge_verdict", "overall", "sources",
]  # fmt: skip


def verdict_label(verdict: Verdict) -> str:
    """A verdict as the friends kind's tables say it: the verdict module names its clusters
    diarists; here the cluster is the role card."""
    return "too few role cards" if verdict == "too few diarists" else verdict


def results_table(results: Sequence[HypothesisResult]) -> pd.DataFrame:
    """One row per hypothesis × judge, the overall verdict repeated beside each (the report's
    markdown and its CSV read this one table, so they name verdicts alike)."""
    rows = [
        {"id": r.hypothesis.id, "says": r.hypothesis.says}
        | {"contrast": r.hypothesis.contrast.formula(), "direction": r.hypothesis.direction}
        | {"judge": j.judge, "n_cards": j.n_cards, "estimate": j.estimate}
        | {"low": j.low, "high": j.high, "p_raw": j.p_raw, "p_holm": j.p_holm, "mde": j.mde}
        | {"judge_verdict": verdict_label(j.verdict), "overall": verdict_label(r.overall)}
        | {"sources": j.sources}
        for r in results
        for j in r.judges
    ]
    return pd.DataFrame(rows, columns=RESULT_COLUMNS)
