"""Small Markdown helpers for the report: tables, numbers, intervals, quoted text."""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from numbers import Integral, Real
from typing import Any

import pandas as pd

MISSING = "–"


def number(value: Any, digits: int = 1) -> str:
    """A number as the report prints it; missing values are a dash, never 0."""
    if value is None or (isinstance(value, Real) and math.isnan(float(value))):
        return MISSING
    if isinstance(value, bool | Integral | str):
        return str(value)  # ids stay as written: "12" is an id, not a number to round
    if isinstance(value, Real):
        return f"{float(value):.{digits}f}"
    return str(value)


def interval(estimate: Any, low: Any, high: Any, digits: int = 1) -> str:
    """'22.4 [18.1, 28.3]': the estimate and its bootstrap interval."""
    return f"{number(estimate, digits)} [{number(low, digits)}, {number(high, digits)}]"


def cell(value: Any) -> str:
    """Table cells cannot hold pipes or newlines."""
    return str(value).replace("|", "\\|").replace("\n", " ")


def table(frame: pd.DataFrame, columns: Mapping[str, str | Callable[[pd.Series], str]]) -> str:
    """A Markdown table: header -> a column name, or a function of the row."""
    if frame.empty:
        return "_no data_\n"
    headers = list(columns)
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    for _, row in frame.iterrows():
        values = []
        for spec in columns.values():
            values.append(cell(spec(row) if callable(spec) else number(row[spec])))
        lines.append("| " + " | ".join(values) + " |")
    return "\n".join(lines) + "\n"


def key_values(pairs: Mapping[str, Any]) -> str:
    """A two-column table of settings; nested values as compact JSON."""
    rows = []
    for key, value in pairs.items():
        shown = value if isinstance(value, str | int | float) else json.dumps(value, sort_keys=True)
        rows.append(f"| {cell(key)} | {cell(shown)} |")
    return "| key | value |\n|---|---|\n" + "\n".join(rows) + "\n"


def quote(text: str) -> str:
    """Diary text as a block quote, every line kept."""
    lines = str(text).strip().splitlines() or [""]
    return "\n".join(f"> {line}" if line else ">" for line in lines) + "\n"


def join_ids(ids: Sequence[str]) -> str:
    return " ".join(ids)
