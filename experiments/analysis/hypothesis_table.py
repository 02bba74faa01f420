"""A family's verdicts as one tidy table (one row per hypothesis × judge), the table both kinds'
reports print and write as CSV."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from diarylab.experiments.analysis.hypotheses import HypothesisVerdict
from diarylab.experiments.analysis.rules import DEFAULT_JUDGE_CORRELATION, Rule, other_rule
from diarylab.experiments.analysis.verdict_simulation import family_error_text
from diarylab.experiments.analysis.verdicts import verdict_label


def result_columns(clusters: str) -> list[str]:
    """The columns of a results table whose cluster count is `n_<clusters>`."""
    return [
        "id", "says", "contrast", "direction", "judge", "estimate", "low", "high",
        f"n_{clusters}", "sd", "p", "p_holm", "mde", "judge_correlation", "rule",
        "judge_verdict", "overall",
        "sensitivity_rule", "sensitivity_judge_verdict", "sensitivity_overall", "sources",
    ]  # fmt: skip


def _needed(result: HypothesisVerdict[Any], *, sensitivity: bool) -> int:
    return max(
        (v.sensitivity_needed if sensitivity else v.needed for v in result.verdicts), default=0
    )


def results_table(
    results: Sequence[HypothesisVerdict[Any]], *, clusters: str, cluster_word: str
) -> pd.DataFrame:
    """One row per hypothesis × judge, the overall verdict repeated beside each. `p` is the raw
    two-sided sign-flip p, `p_holm` the adjusted one "holm" reads, low/high the 95% sign-flip
    interval "intervals" reads; `rule` names the rule of judge_verdict and overall, the
    sensitivity columns the other rule's. Verdicts are worded with the kind's cluster ("too few
    diarists"). The report's markdown and CSV read this table."""
    rows: list[dict[str, object]] = [
        {"id": r.hypothesis.id, "says": r.hypothesis.says, "contrast": r.hypothesis.formula()}
        | {"direction": r.hypothesis.direction, "judge": v.judge}
        | {"estimate": v.interval.estimate, "low": v.interval.low, "high": v.interval.high}
        | {f"n_{clusters}": v.test.n, "sd": v.sd, "p": v.test.p_two_sided, "p_holm": v.p_holm}
        | {"mde": v.mde, "judge_correlation": v.judge_correlation, "rule": r.rule}
        | {"judge_verdict": verdict_label(v.verdict, cluster_word, v.needed)}
        | {"overall": verdict_label(r.overall, cluster_word, _needed(r, sensitivity=False))}
        | {"sensitivity_rule": other_rule(r.rule)}
        | {
            "sensitivity_judge_verdict": verdict_label(
                v.sensitivity, cluster_word, v.sensitivity_needed
            )
        }
        | {
            "sensitivity_overall": verdict_label(
                r.sensitivity, cluster_word, _needed(r, sensitivity=True)
            )
        }
        | {"sources": v.sources}
        for r in results
        for v in r.verdicts
    ]
    return pd.DataFrame(rows, columns=result_columns(clusters))


def family_error_line(
    table: pd.DataFrame, rule: Rule, hypotheses: int, *, clusters: str, cluster_word: str
) -> str:
    """The family-wise error sentence under a results table: at the run's cluster count and the
    judges' correlation measured in it (the default, said so, where it could not be)."""
    if table.empty:
        return ""
    rho = pd.to_numeric(table["judge_correlation"], errors="coerce").median()
    return "\n" + family_error_text(
        rule,
        int(table[f"n_{clusters}"].max()),
        hypotheses,
        int(table["judge"].nunique()),
        DEFAULT_JUDGE_CORRELATION if pd.isna(rho) else float(rho),
        cluster_word,
        measured=not pd.isna(rho),
    )
