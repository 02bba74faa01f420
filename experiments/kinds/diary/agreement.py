"""Judge agreement in the diary experiment: per pair of judges, per score kind and per rubric
question, Pearson (with its interval through Fisher's z over diarists) and Spearman."""

from __future__ import annotations

from itertools import combinations

import pandas as pd
from scipy.stats import spearmanr

from diarylab.experiments.analysis.bootstrap import BootstrapSettings, pearson_of
from diarylab.experiments.analysis.bounded import correlation_interval
from diarylab.experiments.kinds.diary.comparisons import COLUMNS
from diarylab.experiments.kinds.diary.frames import ordered, usable


def judge_agreement(
    entries: pd.DataFrame, replies: pd.DataFrame, settings: BootstrapSettings
) -> pd.DataFrame:
    """(e) Pearson and Spearman correlation between each pair of judges, per score kind, over
    the entries (or replies, per rubric question) both judges read. Pearson gets a
    interval over diarists (a weighted correlation); Spearman is reported as a point."""
    entry_rows = usable(entries, "mean").drop_duplicates(["entry_id", "judge", "score"])
    units = [(score, group, "entry_id", "mean") for score, group in entry_rows.groupby("score")]
    patterns = entry_rows[entry_rows["score"].str.startswith("pattern:")]
    if patterns["score"].nunique() > 1:
        units.append(("pattern (all)", patterns, "entry_id", "mean"))
    # The rubric per question: pooled over questions, base-rate differences between questions
    # would pass for agreement.
    reply_rows = usable(replies, "p_yes")
    for question, group in reply_rows.groupby("question", sort=True):
        units.append((f"rubric: {question}", group, "reply_id", "p_yes"))
    rows = []
    for a, b in combinations(ordered(pd.concat([entries["judge"], replies["judge"]])), 2):
        for score, group, unit, value in units:
            key = [unit, "diarist"] + (["score"] if unit == "entry_id" else ["question"])
            wide = group[group["judge"].isin([a, b])].pivot_table(
                index=key, columns="judge", values=value, aggfunc="mean"
            )
            if a not in wide or b not in wide:
                continue
            wide = wide[[a, b]].dropna().reset_index()
            if len(wide) < 3:
                continue
            rho = spearmanr(wide[a], wide[b]).statistic
            # Through Fisher's z: the interval stays inside (−1, 1) and keeps its coverage
            # near 1 (experiments/analysis/bounded.py).
            interval = correlation_interval(
                wide.rename(columns={a: "x", b: "y"}),
                pearson_of("x", "y"),
                cluster=settings.cluster,
                level=settings.level,
            )
            rows.append(
                {"judge_a": a, "judge_b": b, "score": score, "n": len(wide)}
                | {"pearson": interval.estimate, "pearson_low": interval.low}
                | {"pearson_high": interval.high, "spearman": float(rho)}
                | {"sources": tuple(sorted(set(wide[unit])))}
            )
    return pd.DataFrame(rows, columns=COLUMNS["agreement"])
