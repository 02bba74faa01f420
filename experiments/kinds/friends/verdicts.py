"""The friends kind's hypotheses, evaluated by the shared evaluator
(experiments/analysis/hypotheses.py) on each hypothesis's per-card contrast: the exact
sign-flip test per judge, decided by the design's rule (the shipped design: "every listed
judge's 95% interval excludes zero in the stated direction", as its method page states; "holm"
beside it as the sensitivity), the design's minimum of role cards, every judge agreeing. The
interval is the sign-flip test inverted (95%, unadjusted)."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from diarylab.experiments.analysis.hypotheses import (
    ClusterValues,
    HypothesisVerdict,
    evaluate_family,
)
from diarylab.experiments.analysis.hypothesis_table import results_table as shared_results_table
from diarylab.experiments.analysis.rules import Rule
from diarylab.experiments.analysis.verdicts import MIN_CLUSTERS
from diarylab.experiments.kinds.friends.contrast import FriendsHypothesis
from diarylab.experiments.kinds.friends.outcomes import per_card

HypothesisResult = HypothesisVerdict[FriendsHypothesis]
CLUSTER_WORD = "role cards"


def evaluate(
    hypotheses: Sequence[FriendsHypothesis],
    outcomes: pd.DataFrame,
    *,
    seed: int = 0,
    min_role_cards: int = MIN_CLUSTERS,
    rule: Rule = "holm",
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
        rule=rule,
        seed=seed,
    )


def results_table(results: Sequence[HypothesisResult]) -> pd.DataFrame:
    """One row per hypothesis × judge (columns: experiments.analysis.hypotheses)."""
    return shared_results_table(results, clusters="cards", cluster_word=CLUSTER_WORD)
