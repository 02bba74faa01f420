"""Per-diarist tables: each steered score set beside the same diarist's unsteered twin.

Pattern scores are always read against the same diarist unsteered (same diarist, same entry
number, same chatbot, same judge), so a diarist's own level cancels and the bootstrap only has to
carry what differs between diarists in how steering and replies act on them. Everything returned
here has one row per diarist, ready for `cluster_bootstrap`, plus the ids of the store rows it
was computed from."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd

from diarylab.experiments.kinds.diary.frames import (
    UNSTEERED,
    collapse_first_entries,
    pattern_score,
    steered_profiles,
    usable,
)

PAIR_COLUMNS = ["diarist", "steered", "unsteered", "diff", "sources"]


def _side(rows: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    grouped = rows.groupby(["diarist", *keys], sort=True)
    return grouped.agg(value=("mean", "mean"), ids=("entry_id", lambda s: tuple(sorted(set(s)))))


def paired_differences(
    entries: pd.DataFrame, *, judge: str, profile: str, score: str, keys: Sequence[str]
) -> pd.DataFrame:
    """Steered minus unsteered for one judge, profile and score kind, matched on diarist and
    `keys` (e.g. chatbot, entry_index). Only matches present and readable on both sides count.
    Pass entries through `collapse_first_entries` first when entry 1 is involved."""
    keys = list(keys)
    base = entries[(entries["judge"] == judge) & (entries["score"] == score)]
    base = usable(base, "mean")
    steered = _side(base[base["profile"] == profile], keys)
    unsteered = _side(base[base["profile"] == UNSTEERED], keys)
    both = steered.merge(
        unsteered, how="inner", left_index=True, right_index=True, suffixes=("_s", "_u")
    ).reset_index()
    out = pd.DataFrame(
        {
            **{k: both[k] for k in ["diarist", *keys]},
            "steered": both["value_s"].astype(float),
            "unsteered": both["value_u"].astype(float),
        }
    )
    out["diff"] = out["steered"] - out["unsteered"]
    out["sources"] = [a + b for a, b in zip(both["ids_s"], both["ids_u"], strict=True)]
    return out


def per_diarist(rows: pd.DataFrame, columns: Sequence[str] = ("steered", "unsteered", "diff")):
    """Average several matched rows of a diarist into one (each diarist counts once)."""
    if rows.empty:
        return pd.DataFrame(columns=["diarist", *columns, "sources"])
    grouped = rows.groupby("diarist", sort=True)
    out = grouped[list(columns)].mean()
    out["sources"] = grouped["sources"].agg(lambda s: tuple(sorted(set().union(*s))))
    return out.reset_index()


def _profiles(entries: pd.DataFrame, profile: str | None) -> list[tuple[str, str]]:
    """The steered profiles a contrast covers: one, or all of them (pooled per diarist)."""
    profiles = steered_profiles(entries)
    return [p for p in profiles if profile is None or p[0] == profile]


def first_entry_steering(entries: pd.DataFrame, judge: str, profile: str | None) -> pd.DataFrame:
    """Per diarist: first-entry score of the profile's own pattern, steered minus unsteered.
    profile=None pools the steered profiles (the mean over them, per diarist)."""
    first = collapse_first_entries(entries[entries["entry_index"] == 1])
    parts = [
        per_diarist(
            paired_differences(
                first, judge=judge, profile=name, score=pattern_score(pattern), keys=[]
            )
        )
        for name, pattern in _profiles(entries, profile)
    ]
    return _pooled(parts)


def drift_rows(entries: pd.DataFrame, judge: str, profile: str) -> pd.DataFrame:
    """Matched rows (diarist, chatbot, entry_index) of the own-pattern score at entries ≥ 2,
    steered minus unsteered under the same chatbot."""
    pattern = dict(steered_profiles(entries)).get(profile)
    if pattern is None:
        return _empty(["chatbot", "entry_index"])
    later = entries[entries["entry_index"] >= 2]
    return paired_differences(
        later,
        judge=judge,
        profile=profile,
        score=pattern_score(pattern),
        keys=["chatbot", "entry_index"],
    )


def drift(
    entries: pd.DataFrame,
    judge: str,
    profile: str | None,
    chatbot: str,
    entry: int | None,
    baseline: str | None = None,
) -> pd.DataFrame:
    """Per diarist: drift under `chatbot` at `entry` (None: mean over entries ≥ 2), minus the
    same diarist's drift under `baseline` when one is given. profile=None pools profiles."""
    return _per_profile(
        entries, profile, lambda name: drift_rows(entries, judge, name), chatbot, entry, baseline
    )


def drift_change_rows(entries: pd.DataFrame, judge: str, profile: str) -> pd.DataFrame:
    """Matched rows (diarist, chatbot, entry_index ≥ 2) of the gap's change since the shared
    first entry: Δk = [S(k) − U(k)] − [S(1) − U(1)]. `steered` holds S(k) − S(1) and
    `unsteered` U(k) − U(1), so diff = steered − unsteered = Δk; a diarist without a readable
    first-entry pair drops out."""
    later = drift_rows(entries, judge, profile)
    pattern = dict(steered_profiles(entries)).get(profile)
    if pattern is None or later.empty:
        return _empty(["chatbot", "entry_index"])
    first = collapse_first_entries(entries[entries["entry_index"] == 1])
    start = paired_differences(
        first, judge=judge, profile=profile, score=pattern_score(pattern), keys=[]
    ).set_index("diarist")
    later = later[later["diarist"].isin(start.index)].reset_index(drop=True)
    at_start = start.loc[later["diarist"]].reset_index(drop=True)
    out = later.copy()
    out["steered"] = later["steered"] - at_start["steered"]
    out["unsteered"] = later["unsteered"] - at_start["unsteered"]
    out["diff"] = out["steered"] - out["unsteered"]
    out["sources"] = [a + b for a, b in zip(later["sources"], at_start["sources"], strict=True)]
    return out


def drift_change(
    entries: pd.DataFrame,
    judge: str,
    profile: str | None,
    chatbot: str,
    entry: int | None,
    baseline: str | None = None,
) -> pd.DataFrame:
    """Per diarist: Δk under `chatbot` at `entry` (None: mean over entries ≥ 2); with a
    baseline, Δk(chatbot) − Δk(baseline), the difference in differences. profile=None pools.

    In the difference in differences the shared first-entry gap S(1) − U(1) cancels, so it is
    computed from entries ≥ 2 alone: a diarist whose first entry is unreadable (on either side)
    stays in, rather than dropping out of a contrast that never uses entry 1."""
    if baseline is not None:
        return drift(entries, judge, profile, chatbot, entry, baseline)
    return _per_profile(
        entries, profile, lambda name: drift_change_rows(entries, judge, name), chatbot, entry
    )


def steered_vs_baseline_rows(
    entries: pd.DataFrame, judge: str, profile: str, baseline: str
) -> pd.DataFrame:
    """Matched rows (diarist, chatbot, entry_index ≥ 2) of the steered own-pattern score under
    each chatbot beside the same diarist's steered score under `baseline` at the same entry:
    `steered` = S_chatbot(k), `unsteered` here holds S_baseline(k), diff = their difference."""
    pattern = dict(steered_profiles(entries)).get(profile)
    if pattern is None:
        return _empty(["chatbot", "entry_index"])
    base = entries[
        (entries["judge"] == judge)
        & (entries["score"] == pattern_score(pattern))
        & (entries["profile"] == profile)
        & (entries["entry_index"] >= 2)
    ]
    sides = _side(usable(base, "mean"), ["chatbot", "entry_index"]).reset_index()
    theirs = sides[sides["chatbot"] == baseline].drop(columns="chatbot")
    mine = sides[sides["chatbot"] != baseline]
    both = mine.merge(theirs, on=["diarist", "entry_index"], suffixes=("_s", "_b"))
    out = both[["diarist", "chatbot", "entry_index"]].copy()
    out["steered"] = both["value_s"].astype(float)
    out["unsteered"] = both["value_b"].astype(float)
    out["diff"] = out["steered"] - out["unsteered"]
    out["sources"] = [a + b for a, b in zip(both["ids_s"], both["ids_b"], strict=True)]
    return out


def steered_vs_baseline(
    entries: pd.DataFrame,
    judge: str,
    profile: str | None,
    chatbot: str,
    entry: int | None,
    baseline: str,
) -> pd.DataFrame:
    """Per diarist: S_chatbot(k) − S_baseline(k) (None: mean over entries ≥ 2)."""

    def rows_of(name: str) -> pd.DataFrame:
        return steered_vs_baseline_rows(entries, judge, name, baseline)

    return _per_profile(entries, profile, rows_of, chatbot, entry)


def quality(entries: pd.DataFrame, judge: str, profile: str | None, score: str) -> pd.DataFrame:
    """Per diarist: coherence or realism, steered minus unsteered, matched on chatbot and entry
    and averaged over them (the shared first entry once)."""
    collapsed = collapse_first_entries(entries)
    parts = [
        per_diarist(
            paired_differences(
                collapsed, judge=judge, profile=name, score=score, keys=["chatbot", "entry_index"]
            )
        )
        for name, _ in _profiles(entries, profile)
    ]
    return _pooled(parts)


def subtract(mine: pd.DataFrame, theirs: pd.DataFrame) -> pd.DataFrame:
    """Difference of two per-diarist tables, on the diarists both have."""
    both = mine.merge(theirs, on="diarist", suffixes=("", "_b"))
    out = pd.DataFrame({"diarist": both["diarist"]})
    for column in ("steered", "unsteered", "diff"):
        out[column] = both[column] - both[f"{column}_b"]
    out["sources"] = [a + b for a, b in zip(both["sources"], both["sources_b"], strict=True)]
    return out


def _per_profile(
    entries: pd.DataFrame,
    profile: str | None,
    rows_of: Callable[[str], pd.DataFrame],
    chatbot: str,
    entry: int | None,
    baseline: str | None = None,
) -> pd.DataFrame:
    """Per diarist, pooled over the contrast's profiles: each profile's matched rows
    (`rows_of`) under `chatbot` at `entry` (None: every entry the rows hold), minus the same
    diarist's under `baseline` when one is given."""
    parts = []
    for name, _ in _profiles(entries, profile):
        rows = rows_of(name)
        if entry is not None:
            rows = rows[rows["entry_index"] == entry]
        mine = per_diarist(rows[rows["chatbot"] == chatbot])
        if baseline is not None:
            mine = subtract(mine, per_diarist(rows[rows["chatbot"] == baseline]))
        parts.append(mine)
    return _pooled(parts)


def _pooled(parts: list[pd.DataFrame]) -> pd.DataFrame:
    """Per-profile tables pooled: each diarist's mean over the profiles it has."""
    return per_diarist(pd.concat(parts, ignore_index=True)) if parts else per_diarist(_empty())


def _empty(keys: Sequence[str] = ()) -> pd.DataFrame:
    return pd.DataFrame({c: pd.Series(dtype=object) for c in ["diarist", *keys]}).assign(
        steered=np.nan, unsteered=np.nan, diff=np.nan, sources=None
    )
