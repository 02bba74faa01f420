"""The tables analysis reads, and the few reshaping steps every comparison shares.

The store exports three tables (one row per entry × judge × score kind, per reply × judge ×
question, and per flag); this module fixes their columns so that the statistics work the same on
synthetic data in tests and on a real run."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from diarylab.foundation.errors import LabError

UNSTEERED = "unsteered"
# Entry 1 of a diarist × profile is written once and answered by every chatbot; it is shown
# under this label wherever it has been collapsed to one observation.
SHARED = "(shared)"

ENTRY_COLUMNS = (
    "cell_id", "diarist", "profile", "pattern", "chatbot", "entry_index", "judge",
    "score", "mean", "coverage", "readable", "entry_id", "text",
)  # fmt: skip
# applies: the weight q of a conditioned question (rubric/behavior.py condition_weight; 1 when
# unconditioned, NaN when the person answer is unreadable); desired: "yes" or "no".
REPLY_COLUMNS = (
    "cell_id", "diarist", "profile", "pattern", "chatbot", "entry_index", "judge",
    "question", "behavior", "desired", "p_yes", "applies", "coverage", "readable", "reply_id",
    "text",
)  # fmt: skip
FLAG_COLUMNS = ("kind", "where", "detail")


@dataclass(frozen=True)
class AnalysisTables:
    """What a report is computed from: the store's three tables, unchanged."""

    entries: pd.DataFrame
    replies: pd.DataFrame
    flags: pd.DataFrame

    def __post_init__(self) -> None:
        for name, frame, columns in (
            ("entries", self.entries, ENTRY_COLUMNS),
            ("replies", self.replies, REPLY_COLUMNS),
            ("flags", self.flags, FLAG_COLUMNS),
        ):
            missing = [c for c in columns if c not in frame.columns]
            if missing:
                raise LabError(
                    f"table '{name}' lacks columns {missing}",
                    where="analysis tables",
                    fix="export the store with the columns in experiments/kinds/diary/frames.py",
                )


def pattern_score(pattern: str) -> str:
    return f"pattern:{pattern}"


def usable(frame: pd.DataFrame, value: str) -> pd.DataFrame:
    """Rows whose judgment was readable. An unreadable judgment is missing data, never a score:
    it is dropped here and counted in the report, not replaced."""
    values = pd.to_numeric(frame[value], errors="coerce")
    keep = frame["readable"].astype(bool).to_numpy() & np.isfinite(values.to_numpy(dtype=float))
    return frame.loc[keep]


def collapse_first_entries(entries: pd.DataFrame) -> pd.DataFrame:
    """One row per first entry × judge × score: the shared first entry may be exported under
    every chatbot (same entry_id); counting it once per chatbot would weight it several times."""
    first = entries["entry_index"].to_numpy() == 1
    # Copies of one judgment are identical in a real store; should they differ, a readable
    # copy wins over an unreadable one.
    head = entries.loc[first].sort_values("readable", ascending=False, kind="stable")
    head = head.drop_duplicates(["entry_id", "judge", "score"]).sort_index().copy()
    head["chatbot"] = SHARED
    return pd.concat([head, entries.loc[~first]], ignore_index=True)


def steered_profiles(frame: pd.DataFrame) -> list[tuple[str, str]]:
    """(profile, pattern) for every steered profile present, in a stable order."""
    rows = frame.loc[frame["profile"] != UNSTEERED, ["profile", "pattern"]].drop_duplicates()
    return sorted((str(p), str(q)) for p, q in rows.itertuples(index=False))


def ordered(values: pd.Series, first: str | None = None) -> list[str]:
    """Distinct values sorted, with `first` (e.g. the baseline chatbot) leading if present."""
    distinct = sorted(str(v) for v in values.dropna().unique())
    if first is not None and first in distinct:
        distinct.remove(first)
        distinct.insert(0, first)
    return distinct
