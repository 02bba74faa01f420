"""The diary experiment's comparisons, each as a tidy table with an interval per row (over
diarists, by the design's [analysis] interval).

Every comparison stays within one judge (judges' scales differ; agreeing judges are reported
side by side, never averaged), and every row carries the ids of the store rows behind it
(`sources`), so a number in the report can be traced back to entries and replies."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import pandas as pd

from diarylab.experiments.analysis.bootstrap import (
    BootstrapSettings,
    Statistic,
    cluster_bootstrap,
    mean_of,
)
from diarylab.experiments.analysis.skew import skew_check
from diarylab.experiments.kinds.diary import paired
from diarylab.experiments.kinds.diary.frames import (
    UNSTEERED,
    collapse_first_entries,
    ordered,
    pattern_score,
    steered_profiles,
    usable,
)

ALL_PROFILES = "(all)"
QUALITY_SCORES = ("coherence", "realism")
# Each table's columns, so an empty run still gives tables of the right shape.
SUMMARY = [
    "n_diarists",
    "n_expected",
    "steered",
    "unsteered",
    "estimate",
    "low",
    "high",
    "skewness",
    "robust_low",
    "robust_high",
    "lost_low",
    "lost_high",
    "sources",
]
# A row that lost more than this share of its diarists gets bounds beside its estimate: the
# mean with the lost diarists' differences set to the lowest and to the highest one observed.
# Diarists lost for a reason tied to their scores (low scorers losing entries) bias the mean;
# the bounds show how far, within the range the data show.
MISSING_SHARE = 0.1
COLUMNS = {
    "steering": ["judge", "profile", "pattern", *SUMMARY],
    "drift": ["judge", "profile", "pattern", "chatbot", "entry_index", *SUMMARY],
    "drift_vs_baseline": [
        "judge", "profile", "pattern", "chatbot", "baseline", "entry_index", *SUMMARY
    ],
    "quality": ["judge", "profile", "pattern", "score", *SUMMARY],
    "pattern_by_entry": [
        "judge", "profile", "pattern", "of", "chatbot", "entry_index", "n_diarists",
        "estimate", "low", "high",
    ],
    "drift_change": ["judge", "profile", "pattern", "chatbot", "entry_index", *SUMMARY],
    "steered_vs_baseline": [
        "judge", "profile", "pattern", "chatbot", "baseline", "entry_index", *SUMMARY
    ],
    "behaviors": [
        "judge", "chatbot", "profile", "behavior", "n_replies", "weighted_answers", "kish_n",
        "n_diarists", "estimate", "low", "high", "near_bound", "sources",
    ],
    "behavior_questions": [
        "judge", "chatbot", "profile", "behavior", "question", "desired", "n_replies",
        "sum_q", "kish_n", "n_diarists", "share_estimate", "share_low", "share_high",
        "appropriate_estimate", "appropriate_low", "appropriate_high", "near_bound", "sources",
    ],
    "hard_cut": [
        "judge", "chatbot", "question", "applies_when", "n_replies", "n_kept",
        "sum_q", "kish_n", "soft_estimate", "hard_estimate", "hard_low", "hard_high",
        "near_bound", "sources",
    ],
    "agreement": [
        "judge_a", "judge_b", "score", "n", "pearson", "pearson_low", "pearson_high", "spearman",
        "sources",
    ],
}  # fmt: skip


def interval_columns(
    table: pd.DataFrame,
    column: str | Statistic,
    settings: BootstrapSettings,
    prefix: str = "",
) -> dict[str, float | int]:
    """estimate/low/high of the mean of `column` (or of a statistic), its interval over
    diarists. Each row uses a fresh generator from the same seed, so a row's interval does not
    depend on which other rows were computed before it."""
    interval = cluster_bootstrap(
        table,
        mean_of(column) if isinstance(column, str) else column,
        cluster=settings.cluster,
        resamples=settings.resamples,
        seed=settings.seed,
        level=settings.level,
        method=settings.method,
    )
    return {
        f"{prefix}estimate": interval.estimate,
        f"{prefix}low": interval.low,
        f"{prefix}high": interval.high,
    }


def lost_bounds(values: np.ndarray, expected: int) -> tuple[float, float]:
    """The mean with the `expected − present` lost values set to the lowest and to the highest
    present value; NaN where no more than MISSING_SHARE was lost (or nothing is present)."""
    x = values[np.isfinite(values)]
    lost = expected - x.size
    if x.size == 0 or lost <= MISSING_SHARE * expected:
        return math.nan, math.nan
    return (
        float((x.sum() + lost * x.min()) / expected),
        float((x.sum() + lost * x.max()) / expected),
    )


def _summary(
    per_diarist: pd.DataFrame, settings: BootstrapSettings, expected: int
) -> dict[str, object]:
    # Hall's skewness-corrected interval on every row, a sensitivity beside the table's
    # (experiments/analysis/skew.py says why no row is flagged).
    diff = per_diarist["diff"].to_numpy(dtype=float)
    skew = skew_check(diff, settings.level)
    lost_low, lost_high = lost_bounds(diff, expected)
    return {
        "n_diarists": int(per_diarist["diff"].notna().sum()),
        "n_expected": expected,
        "steered": float(per_diarist["steered"].mean()),
        "unsteered": float(per_diarist["unsteered"].mean()),
        **interval_columns(per_diarist, "diff", settings),
        "skewness": skew.skewness,
        "robust_low": skew.robust_low,
        "robust_high": skew.robust_high,
        "lost_low": lost_low,
        "lost_high": lost_high,
        "sources": tuple(sorted(set().union(*per_diarist["sources"]))),
    }


def _expected(entries: pd.DataFrame) -> int:
    """The diarists a row should have: every diarist the run wrote for."""
    return int(entries["diarist"].nunique())


def steering_effect(entries: pd.DataFrame, settings: BootstrapSettings) -> pd.DataFrame:
    """(a) Did steering work: first-entry score of the profile's own pattern, steered minus the
    same diarist unsteered, per judge and profile."""
    rows = []
    for judge in ordered(entries["judge"]):
        for profile, pattern in steered_profiles(entries):
            table = paired.first_entry_steering(entries, judge, profile)
            rows.append(
                {"judge": judge, "profile": profile, "pattern": pattern}
                | _summary(table, settings, _expected(entries))
            )
    return pd.DataFrame(rows, columns=COLUMNS["steering"])


def _per_chatbot_and_entry(
    entries: pd.DataFrame,
    settings: BootstrapSettings,
    matched_rows: Callable[[str, str], pd.DataFrame],
    table: str,
    extra: Mapping[str, Any] | None = None,
) -> pd.DataFrame:
    """One summary per judge, steered profile, chatbot and entry of the matched rows that
    `matched_rows(judge, profile)` gives (each a per-diarist difference)."""
    rows = []
    for judge in ordered(entries["judge"]):
        for profile, pattern in steered_profiles(entries):
            matched = matched_rows(judge, profile)
            for (chatbot, entry), group in matched.groupby(["chatbot", "entry_index"]):
                rows.append(
                    {"judge": judge, "profile": profile, "pattern": pattern}
                    | {"chatbot": chatbot, **(extra or {}), "entry_index": int(entry)}
                    | _summary(paired.per_diarist(group), settings, _expected(entries))
                )
    return pd.DataFrame(rows, columns=COLUMNS[table])


def drift(entries: pd.DataFrame, settings: BootstrapSettings) -> pd.DataFrame:
    """(b) Drift: own-pattern score at entries ≥ 2, steered minus the same diarist unsteered
    under the same chatbot at the same entry; per judge, profile, chatbot and entry."""
    return _per_chatbot_and_entry(
        entries,
        settings,
        lambda judge, profile: paired.drift_rows(entries, judge, profile),
        "drift",
    )


def drift_vs_baseline(
    entries: pd.DataFrame, settings: BootstrapSettings, baseline: str = "thanks"
) -> pd.DataFrame:
    """(b) Each chatbot's drift minus the fixed-reply baseline's, same diarist and entry: what
    the replies did beyond the diarist simply being answered."""
    rows = []
    for judge in ordered(entries["judge"]):
        for profile, pattern in steered_profiles(entries):
            matched = paired.drift_rows(entries, judge, profile)
            for entry, at_entry in matched.groupby("entry_index"):
                theirs = paired.per_diarist(at_entry[at_entry["chatbot"] == baseline])
                if theirs.empty:
                    continue
                for chatbot, group in at_entry.groupby("chatbot"):
                    if chatbot == baseline:
                        continue
                    table = paired.subtract(paired.per_diarist(group), theirs)
                    rows.append(
                        {"judge": judge, "profile": profile, "pattern": pattern}
                        | {"chatbot": chatbot, "baseline": baseline, "entry_index": int(entry)}
                        | _summary(table, settings, _expected(entries))
                    )
    return pd.DataFrame(rows, columns=COLUMNS["drift_vs_baseline"])


def drift_change(entries: pd.DataFrame, settings: BootstrapSettings) -> pd.DataFrame:
    """(b) Drift as change: Δk = [S(k) − U(k)] − [S(1) − U(1)] per diarist, the own-pattern
    gap at entry k minus the gap at the shared first entry; per judge, profile, chatbot, k.
    `steered`/`unsteered` are the means of S(k) − S(1) and U(k) − U(1)."""
    return _per_chatbot_and_entry(
        entries,
        settings,
        lambda judge, profile: paired.drift_change_rows(entries, judge, profile),
        "drift_change",
    )


def steered_vs_baseline(
    entries: pd.DataFrame, settings: BootstrapSettings, baseline: str = "thanks"
) -> pd.DataFrame:
    """Each chatbot's steered own-pattern score minus the baseline's steered score, same
    diarist and entry (`steered`: under the chatbot, `unsteered`: under the baseline)."""
    return _per_chatbot_and_entry(
        entries,
        settings,
        lambda judge, profile: paired.steered_vs_baseline_rows(entries, judge, profile, baseline),
        "steered_vs_baseline",
        {"baseline": baseline},
    )


def quality(entries: pd.DataFrame, settings: BootstrapSettings) -> pd.DataFrame:
    """(d) Coherence and realism, steered minus the same diarist unsteered (matched on chatbot
    and entry, the shared first entry counted once), per judge and profile."""
    rows = []
    for judge in ordered(entries["judge"]):
        for profile, pattern in steered_profiles(entries):
            for score in QUALITY_SCORES:
                table = paired.quality(entries, judge, profile, score)
                if table.empty:
                    continue
                rows.append(
                    {"judge": judge, "profile": profile, "pattern": pattern, "score": score}
                    | _summary(table, settings, _expected(entries))
                )
    return pd.DataFrame(rows, columns=COLUMNS["quality"])


def pattern_by_entry(entries: pd.DataFrame, settings: BootstrapSettings) -> pd.DataFrame:
    """Mean own-pattern score by entry for each profile × chatbot (and the unsteered twin on the
    same pattern), over diarists, for plotting with bands. Entry 1 has chatbot '(shared)'."""
    collapsed = usable(collapse_first_entries(entries), "mean")
    rows = []
    for judge in ordered(entries["judge"]):
        for profile, pattern in steered_profiles(entries):
            for who in (profile, UNSTEERED):
                part = collapsed[
                    (collapsed["judge"] == judge)
                    & (collapsed["profile"] == who)
                    & (collapsed["score"] == pattern_score(pattern))
                ]
                for (chatbot, entry), group in part.groupby(["chatbot", "entry_index"]):
                    table = group.groupby("diarist", as_index=False)["mean"].mean()
                    rows.append(
                        {"judge": judge, "profile": who, "pattern": pattern, "of": profile}
                        | {"chatbot": chatbot, "entry_index": int(entry)}
                        | {"n_diarists": len(table)}
                        | interval_columns(table, "mean", settings)
                    )
    return pd.DataFrame(rows, columns=COLUMNS["pattern_by_entry"])
