"""The report's section on the judge-free pattern measure (judge id `projection`): its steered −
unsteered difference and how it correlates with each judge's pattern score. The numbers come
from the report's own steering and agreement tables (same row ids, same intervals), so this
section only picks out and explains the rows where the measure stands beside a judge."""

from __future__ import annotations

import pandas as pd

from experiments.analysis import markdown as md

JUDGE = "projection"


def section(steering: pd.DataFrame, agreement: pd.DataFrame, judge: str = JUDGE) -> list[str]:
    """Markdown parts of the section; none when the run has no projection scores."""
    steer = steering[steering["judge"] == judge] if len(steering) else steering
    if steer.empty:
        return []
    mine = agreement[
        ((agreement["judge_a"] == judge) | (agreement["judge_b"] == judge))
        & agreement["score"].astype(str).str.startswith("pattern")
    ]
    other = mine.assign(
        judge=[
            b if a == judge else a for a, b in zip(mine["judge_a"], mine["judge_b"], strict=True)
        ]
    )
    parts = [
        "## Judge-free pattern measure\n",
        "Each entry read back through the unsteered diarist model: its mean activation over the "
        "entry's tokens at the steering layers, projected on the pattern's direction (in units of "
        "the layer's typical residual norm). It needs no judge; it says whether the text itself "
        f"carries the pattern. It appears as judge `{judge}` in every table.\n",
        md.table(
            steer,
            {"row": "row_id", "profile": "profile", "n": "n_diarists"}
            | {
                "steered − unsteered [95% CI]": lambda r: md.interval(
                    r["estimate"], r["low"], r["high"], 3
                )
            },
        ),
    ]
    if len(other):
        parts += [
            "Correlation with each judge's pattern score, over the entries both read (Pearson with "
            "a cluster-bootstrap interval over diarists):\n",
            md.table(
                other,
                {"row": "row_id", "judge": "judge", "score": "score", "n": "n"}
                | {
                    "Pearson [95% CI]": lambda r: md.interval(
                        r["pearson"], r["pearson_low"], r["pearson_high"], 2
                    )
                }
                | {"Spearman": lambda r: md.number(r["spearman"], 2)},
            ),
        ]
    else:
        parts.append("_No judge's pattern scores overlap enough entries for a correlation._\n")
    return parts
