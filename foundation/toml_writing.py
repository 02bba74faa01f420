"""Writing a data file back as TOML (the standard library reads TOML but does not write it).

Used where the lab derives one design from another (a pilot's reduced copy) and must lock the
derived file into a run folder like any design. Covers what the lab's data files hold: tables,
arrays of tables, inline tables, strings, integers, floats, booleans and arrays. Strings are
written as JSON strings, which are valid TOML basic strings."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import Any

_BARE = re.compile(r"^[A-Za-z0-9_-]+$")


def dump_toml(data: Mapping[str, Any]) -> str:
    """TOML text that tomllib reads back as `data`."""
    lines: list[str] = []
    scalars = {k: v for k, v in data.items() if not _is_table(v) and not _is_table_array(v)}
    lines += [f"{_key(k)} = {_value(v)}" for k, v in scalars.items()]
    for k, v in data.items():
        if _is_table(v):
            lines += ["", f"[{_key(k)}]", *(f"{_key(a)} = {_value(b)}" for a, b in v.items())]
        elif _is_table_array(v):
            for item in v:
                lines += ["", f"[[{_key(k)}]]"]
                lines += [f"{_key(a)} = {_value(b)}" for a, b in item.items()]
    return "\n".join(lines).lstrip("\n") + "\n"


def _is_table(value: Any) -> bool:
    return isinstance(value, Mapping)


def _is_table_array(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(v, Mapping) for v in value)


def _key(key: str) -> str:
    return key if _BARE.match(key) else json.dumps(key, ensure_ascii=False)


def _value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, Mapping):
        inner = ", ".join(f"{_key(k)} = {_value(v)}" for k, v in value.items())
        return "{ " + inner + " }" if inner else "{}"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    raise TypeError(f"cannot write {type(value).__name__} as TOML")
