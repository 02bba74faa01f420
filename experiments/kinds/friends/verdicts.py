"""The friends kind's hypotheses, evaluated by the shared evaluator
(experiments/analysis/hypotheses.py) on each hypothesis's per-card contrast: the exact
sign-flip test per judge, Holm across the hypotheses naming the judge, the design's minimum of
role cards, every judge agreeing. The interval shown is the sign-flip test inverted (the set of
effects the test does not reject at 95%, unadjusted)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from experiments.analysis.bootstrap import Interval
from experiments.analysis.hypotheses import (
    ClusterValues,
    HypothesisVerdict,
    IntervalRule,
    evaluate_family,
)
from experiments.analysis.hypotheses import results_table as shared_results_table
from experiments.analysis.verdicts import ALPHA, MIN_CLUSTERS, sign_flip_interval
from experiments.kinds.friends.contrast import FriendsHypothesis
from experiments.kinds.friends.outcomes import per_card

HypothesisResult = HypothesisVerdict[FriendsHypothesis]
CLUSTER_WORD = "role cards"


def inverted_sign_flip(seed: int, alpha: float = ALPHA) -> IntervalRule:
    """The interval rule: the sign-flip test inverted at `alpha` (unadjusted)."""

    def rule(values: np.ndarray) -> Interval:
        low, high = sign_flip_interval(list(values), alpha=alpha, seed=seed)
        mean = float(np.mean(values)) if len(values) else float("nan")
        return Interval(mean, low, high, 1 - alpha, "sign-flip", 0, len(values))

    return rule


def evaluate(
    hypotheses: Sequence[FriendsHypothesis],
    outcomes: pd.DataFrame,
    *,
    seed: int = 0,
    min_role_cards: int = MIN_CLUSTERS,
) -> tuple[HypothesisResult, ...]:
    values = {}
    for h in hypotheses:
        for judge in h.judges:
            table = per_card(h.contrast, outcomes, judge)
            sources = {i for ids in table["sources"] for i in ids}
            values[(h.id, judge)] = ClusterValues(
                tuple(table["diff"].astype(float)), tuple(sorted(sources))
            )
    return evaluate_family(
        hypotheses,
        values,
        min_clusters=min_role_cards,
        interval=inverted_sign_flip(seed),
        seed=seed,
    )


def results_table(results: Sequence[HypothesisResult]) -> pd.DataFrame:
    """One row per hypothesis × judge (columns: experiments.analysis.hypotheses)."""
    return shared_results_table(results, clusters="cards", cluster_word=CLUSTER_WORD)
