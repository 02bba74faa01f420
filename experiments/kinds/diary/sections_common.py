"""What the diary report's sections share: the exploratory label, the column type, a row's
measure precision and the interval cell."""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd

from diarylab.experiments.analysis import markdown as md
from diarylab.experiments.kinds.diary.schema import PROJECTION

EXPLORATORY = "(exploratory, unadjusted)"
Column = str | Callable[[pd.Series], str]


def measure_digits(row: pd.Series) -> int:
    """Decimals for a row's measure: the projection is in units of the residual norm (values
    about 0.1, so one decimal would hide every difference); judges' scores are 0–100."""
    return 3 if row.get("judge") == PROJECTION else 1


def ci(prefix: str = "", digits: int | None = None) -> Callable[[pd.Series], str]:
    """'estimate [low, high]' from <prefix>estimate/low/high (or pearson, pearson_low/_high);
    digits None: the row's measure decides (measure_digits)."""
    names = [f"{prefix}estimate", f"{prefix}low", f"{prefix}high"]
    if prefix == "pearson":
        names = ["pearson", "pearson_low", "pearson_high"]

    def shown(row: pd.Series) -> str:
        places = measure_digits(row) if digits is None else digits
        return md.interval(row[names[0]], row[names[1]], row[names[2]], places)

    return shown
