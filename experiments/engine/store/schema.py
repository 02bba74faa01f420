"""The store's schema: its version, the engine's own tables (meta, calls, judgments), the
protocol a kind's row type follows and the table it becomes (table_sql), and the call key every
cached call is stored under. core.py opens and writes a store of this shape."""

from __future__ import annotations

import hashlib
import json
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any, ClassVar, Protocol

SCHEMA_VERSION = "2"  # 2: one call-key scheme for every call; kinds' tables from row types
ENGINE_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS calls (
    key TEXT PRIMARY KEY, kind TEXT NOT NULL, model TEXT NOT NULL,
    request TEXT NOT NULL, result TEXT NOT NULL, created REAL NOT NULL);
"""
_SQL_TYPES = {str: "TEXT", int: "INTEGER", float: "REAL", bool: "INTEGER"}


class Row(Protocol):
    """A dataclass whose instances are rows of TABLE; its first field is the primary key."""

    TABLE: ClassVar[str]
    __dataclass_fields__: ClassVar[dict[str, Any]]


def call_key(kind: str, identity: Mapping[str, Any], request: Mapping[str, Any]) -> str:
    payload = json.dumps(
        {"kind": kind, "model": identity, "request": request},
        sort_keys=True,
        separators=(",", ":"),
        default=str,
    )
    return hashlib.sha256(payload.encode()).hexdigest()


@dataclass(frozen=True)
class JudgmentRow:
    TABLE: ClassVar[str] = "judgments"
    judgment_id: str
    target_kind: str  # what was judged, as the kind names it ("entry", "reply", ...)
    target_id: str
    judge: str
    item: str  # "pattern:<id>", "coherence", "realism", or a rubric question id
    value: float | None  # mean 0..100 or P(yes); None when unreadable
    coverage: float
    readable: bool
    template: str | None
    call_key: str


def table_sql(row_type: Any) -> str:
    hints = typing.get_type_hints(row_type)
    columns = []
    for i, f in enumerate(fields(row_type)):
        hint = hints[f.name]
        args = [a for a in typing.get_args(hint) if a is not type(None)]
        nullable = isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union
        base = args[0] if nullable and args else hint
        column = f"{f.name} {_SQL_TYPES[base]}"
        column += " PRIMARY KEY" if i == 0 else ("" if nullable else " NOT NULL")
        columns.append(column)
    return f"CREATE TABLE IF NOT EXISTS {row_type.TABLE} ({', '.join(columns)})"
