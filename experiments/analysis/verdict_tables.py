"""The preregistered verdicts as a report shows them, for every kind that tests hypotheses: the
verdicts first, narrow enough for a laptop page (overall, the judge's verdict, the estimate,
the contrast last so it wraps), then the figures of each verdict's test in a table of their own
(direction, clusters, p, Holm's p, MDE, the judges' correlation, the other rule's verdict)."""

from __future__ import annotations

from collections.abc import Callable, Mapping

import pandas as pd

from diarylab.experiments.analysis import markdown as md
from diarylab.experiments.analysis.rules import Rule, other_rule

Cell = str | Callable[[pd.Series], str]


def verdict_tables(
    frame: pd.DataFrame,
    rule: Rule,
    estimate: tuple[str, Cell],
    clusters: tuple[str, str],
    figures: Mapping[str, Cell],
) -> list[str]:
    """`estimate`: its header and cell; `clusters`: the header and column of the cluster count;
    `figures`: p, Holm's p, MDE and ρ as the kind prints them."""
    ids: dict[str, Cell] = {"row": "row_id", "id": "id"}
    verdicts = ids | {"overall": "overall", "judge": "judge"}
    verdicts |= {f"judge verdict ({rule})": "judge_verdict", estimate[0]: estimate[1]}
    test = ids | {"judge": "judge", "direction": "direction", clusters[0]: clusters[1]}
    test |= {**figures, f"sensitivity: {other_rule(rule)}": "sensitivity_overall"}
    return [
        md.table(frame, verdicts | {"contrast": "contrast"}),
        "The test behind each verdict (same rows):\n",
        md.table(frame, test),
    ]
