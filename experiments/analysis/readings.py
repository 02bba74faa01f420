"""Judge readings: how every stored judgment was read and how much of the judge's answer it
accounts for, per judge × profile (or whatever the experiment groups its texts by).

Read from the store, never from memory: each judgment row keeps its coverage and whether it was
readable (coverage at or above the run's floor), and the call record it names (`calls.result`,
the judge's raw record) says whether the reading was exact and in which mode it was made, what
the server said it was (its system_fingerprint, the dtype it serves) and the certified bound on
E[n] of a reading that stopped early (rubric/judging/bound.py). A
steered text may be unreadable more often than an unsteered one, so unreadable judgments are not
missing at random; this section lets a reader see that before trusting a contrast."""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np
import pandas as pd

from diarylab.experiments.analysis import markdown as md
from diarylab.experiments.engine.store import Store

# One row per stored judgment. exact: 1.0 / 0.0 from the record, NaN when the judgment names
# no stored call (a row written without one); mode: see reading_mode. fingerprint and dtype:
# what the record says of the server (None where it says nothing); bound_width: the certified
# interval's width for E[n] (hi − lo, 0 when read exactly) and coverage_gap the coverage
# interval's, NaN for a reading without one (a yes/no reading, a record older than trie-v3).
READING_COLUMNS = (
    "judge", "group", "reading", "mode", "exact", "coverage", "readable", "fingerprint", "dtype",
    "bound_width", "coverage_gap",
)  # fmt: skip
SUMMARY_COLUMNS = (
    "judge", "group", "reading", "mode", "n", "exact_share", "bound_width_row_median",
    "coverage_median", "coverage_p5", "unreadable",
)  # fmt: skip
# Per judge, over all its readings (repeated on each of its summary rows): what its server said
# it was, and how wide its score readings' certified bounds are.
JUDGE_COLUMNS = (
    "fingerprints", "dtypes", "scores", "bounded", "bound_width_median", "bound_width_max",
    "coverage_gap_max",
)  # fmt: skip
NOT_RECORDED = "not recorded"
NO_RECORD = "no record"
UNKNOWN_GROUP = "(unknown)"
_READING = {"number": "score", "yes_no": "yes/no"}
Column = str | Callable[[pd.Series], str]


def reading_mode(mode: str | None, backend: str | None) -> str:
    """The record's mode ("local", "exact", "top-k"). Records written before judges recorded
    their mode: a local judge is always read locally; a served one's mode is not known."""
    if mode:
        return str(mode)
    if backend == "local":
        return "local"
    return f"{backend} (mode not recorded)" if backend else NO_RECORD


def _bounded(mode: str, exact: object, max_error: object) -> str:
    """A reading allowed to stop early (max_error > 0) that did not read everything is labelled
    so: it is not an exact reading, whatever transport read it ("exact, bounded": by prompt
    token ids). A top-k reading is never exact for another reason, and keeps its mode."""
    bounded = isinstance(max_error, int | float) and max_error > 0
    return f"{mode}, bounded" if bounded and exact in (0, False) else mode


def stored_readings(store: Store, groups: Mapping[tuple[str, str], str]) -> pd.DataFrame:
    """Every judgment in the store with its record's kind, mode and exactness. `groups` maps
    (target kind, target id) to the group it is shown under (a diary entry's profile). The
    record is read inside SQLite (the store's with_call_fields), so a large run's per-node
    records are never parsed in Python."""
    rows = store.with_call_fields(
        "judgments",
        ("judge", "target_kind", "target_id", "coverage", "readable"),
        [
            "$.kind", "$.exact", "$.mode", "$.backend", "$.system_fingerprint", "$.dtype",
            "$.bound.mean[0]", "$.bound.mean[1]", "$.bound.coverage[0]", "$.bound.coverage[1]",
            "$.max_error",
        ],
    )  # fmt: skip
    out = []
    for row in rows:
        judge, target_kind, target_id, coverage, readable, call, kind, exact, mode, backend = row[
            :10
        ]
        fingerprint, dtype, low, high, covered_low, covered_high, max_error = row[10:]
        width = None if low is None or high is None else high - low
        gap = None if covered_low is None or covered_high is None else covered_high - covered_low
        if call is not None and call != "judge":
            continue  # a judgment that is no judge's reading (the projection measure)
        out.append(
            (
                str(judge),
                groups.get((str(target_kind), str(target_id)), UNKNOWN_GROUP),
                f"{target_kind} {_READING.get(kind, NO_RECORD) if kind else NO_RECORD}",
                _bounded(reading_mode(mode, backend), exact, max_error) if kind else NO_RECORD,
                float(exact) if exact is not None else np.nan,
                float(coverage),
                bool(readable),
                None if fingerprint is None else str(fingerprint),
                None if dtype is None else str(dtype),
                float(width) if width is not None else np.nan,
                float(gap) if gap is not None else np.nan,
            )
        )
    return pd.DataFrame(out, columns=list(READING_COLUMNS))


def _named(values: pd.Series) -> str:
    """The distinct values a judge's records name (a comma-joined fingerprint split up)."""
    names = sorted({n for v in values.dropna() for n in str(v).split(",") if n})
    return ", ".join(names) if names else NOT_RECORDED


def per_judge(readings: pd.DataFrame) -> pd.DataFrame:
    """Per judge: the fingerprints and dtypes its records name, how many score readings it
    made and how many carry a certified bound, their bounds' median and largest width (points
    of E[n]) and the largest coverage gap (probability the bound leaves open)."""
    rows = []
    for judge, part in readings.groupby("judge", sort=True):
        scores = part[part["reading"].str.endswith(" score")]
        width = scores["bound_width"].dropna().to_numpy(dtype=float)
        gap = scores["coverage_gap"].dropna().to_numpy(dtype=float)
        rows.append(
            (
                judge,
                _named(part["fingerprint"]),
                _named(part["dtype"]),
                len(scores),
                len(width),
                float(np.median(width)) if len(width) else np.nan,
                float(width.max()) if len(width) else np.nan,
                float(gap.max()) if len(gap) else np.nan,
            )
        )
    return pd.DataFrame(rows, columns=["judge", *JUDGE_COLUMNS])


def summarize(readings: pd.DataFrame, first: str | None = None) -> pd.DataFrame:
    """Per judge × group × kind of reading × mode: how many readings, the share read exactly,
    the median and 5th-percentile coverage (numpy's linear interpolation) and how many were
    unreadable (coverage under the floor). `first` (e.g. "unsteered") leads each judge's rows."""
    rows = []
    for (judge, group, reading, mode), part in readings.groupby(
        ["judge", "group", "reading", "mode"], sort=False
    ):
        coverage = part["coverage"].to_numpy(dtype=float)
        exact = part["exact"].dropna()
        width = part["bound_width"].dropna()
        rows.append(
            (
                judge,
                group,
                reading,
                mode,
                len(part),
                float(exact.mean()) if len(exact) else np.nan,
                float(width.median()) if len(width) else np.nan,
                float(np.median(coverage)),
                float(np.percentile(coverage, 5)),
                int((~part["readable"].astype(bool)).sum()),
            )
        )
    out = pd.DataFrame(rows, columns=list(SUMMARY_COLUMNS))
    out = out.merge(per_judge(readings), on="judge", how="left")
    # Stable order: judge, then `first` (unsteered) before the other groups, then the rest.
    lead = out["group"] != first if first is not None else pd.Series(True, index=out.index)
    out = out.assign(_lead=lead).sort_values(["judge", "_lead", "group", "reading", "mode"])
    return out.drop(columns="_lead").reset_index(drop=True)


STEERED_WHY = (
    "Steered text may be unreadable more often than unsteered text, so missing readings are not "
    "random: compare these rows across profiles before reading a contrast."
)


def section(
    summary: pd.DataFrame, group_label: str, floor: float | None, why: str = STEERED_WHY
) -> list[str]:
    """The report's "Judge readings" section (Markdown); `why` says why the reader should look."""
    under = f"the coverage floor ({floor:g})" if floor is not None else "the coverage floor"
    columns: dict[str, Column] = {
        "judge": "judge",
        group_label: "group",
        "reading": "reading",
        "mode": "mode",
        "n": "n",
        "read exactly": lambda r: md.number(r["exact_share"], 2),
        "median bound width": lambda r: md.number(r["bound_width_row_median"], 2),
        "median coverage": lambda r: md.number(r["coverage_median"], 3),
        "5th pct coverage": lambda r: md.number(r["coverage_p5"], 3),
        "unreadable": "unreadable",
    }
    return [
        "## Judge readings\n",
        f"Per judge × {group_label}, for each kind of reading: how many were stored, the share "
        "read exactly (every token that could continue the answer had its log-probability "
        "read; the stored record's `exact`), the mode it was read in (`local`: the judge's own "
        "weights; `exact`: a served judge read by prompt token ids; `top-k`: a served judge "
        "read from its top log-probabilities; `, bounded`: the reading stopped early, within a "
        "certified bound on E[n] whose median width in points is shown, so it is not exact), "
        "the median and 5th-percentile coverage (the "
        f"probability the reading accounts for) and how many fell under {under} and are left "
        f"out as unreadable. {why} At full precision: `tables/judge_readings.csv`.\n",
        md.table(summary, columns),
        *_judge_lines(summary),
    ]


def _judge_lines(summary: pd.DataFrame) -> list[str]:
    """Per judge: what its server said it was, and its score readings' certified bounds."""
    judges = summary.drop_duplicates("judge")
    columns: dict[str, Column] = {
        "judge": "judge",
        "dtype": "dtypes",
        "system_fingerprint": "fingerprints",
        "score readings": "scores",
        "with a bound": "bounded",
        "median bound width": lambda r: md.number(r["bound_width_median"], 2),
        "max bound width": lambda r: md.number(r["bound_width_max"], 2),
        "max coverage gap": lambda r: md.number(r["coverage_gap_max"], 4),
    }
    return [
        "\nPer judge: the dtype its records say it was served in and the `system_fingerprint` "
        "its server sent (vLLM: its version and a hash of its whole configuration, so readings "
        "from a server that changed show two), where a record says them (`not recorded`: none "
        "does; `unknown`: the server did not say — vLLM tells its dtype only on the dev-mode "
        "`/server_info` route); then, over its score readings, how many carry a certified "
        "bound on E[n] (a reading may stop early, within the judge's `max_error`: "
        "rubric/judging/bound.py), the median and largest width of that bound in points (0: read "
        "exactly) and the largest coverage the bound leaves open.\n",
        md.table(judges, columns),
    ]
