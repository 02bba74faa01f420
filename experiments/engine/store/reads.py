"""Reading a run store: every query the lab asks of a store, and the only SQL outside the store's
writing core (the store package holds all of the lab's SQL; tests/test_layers.py checks). Callers
name tables, columns and JSON paths of call records; each name is checked against the store's
own schema before it goes into a statement, and values are always bound parameters.

Store inherits these (the writer's thread answers reads while lanes run: `on_writer`)."""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

T = TypeVar("T")
# A JSON path into a call record: $.a.b[0] (names and indices only).
_PATH = re.compile(r"^\$(\.[A-Za-z_][A-Za-z0-9_]*|\[\d+\])+$")
# A call record field read as the first of several paths that is present.
Field = str | tuple[str, ...]


@dataclass(frozen=True)
class JudgeAsks:
    """What a judge's stored calls of one question ("number", "yes_no") say they asked: the
    readings, and the prompts and HTTP requests the served readings' records count."""

    judge: str
    question: str
    readings: int
    prompts: int | None  # None: no record counts its prompts (a local judge's)
    # a yes/no reading read in a list of prompts states its share of the list's requests
    http_requests: float | None


class StoreReads:
    db: sqlite3.Connection

    def on_writer(self, work: Callable[[], T]) -> T:  # pragma: no cover - OneWriter's
        raise NotImplementedError

    # ------------------------------------------------------------------ names
    def tables(self) -> list[str]:
        rows = self.db.execute("SELECT name FROM sqlite_master WHERE type='table' ORDER BY name")
        return [r[0] for r in rows]

    def columns(self, table: str) -> list[str]:
        self._table(table)
        return [r[1] for r in self.db.execute(f"PRAGMA table_info({table})")]

    def _table(self, table: str) -> str:
        if table not in self.tables():
            raise KeyError(f"the store has no table {table!r}")
        return table

    def _columns(self, table: str, names: Sequence[str]) -> list[str]:
        known = set(self.columns(table))
        unknown = [n for n in names if n not in known]
        if unknown:
            raise KeyError(f"table {table!r} has no column {unknown[0]!r}")
        return list(names)

    # ------------------------------------------------------------------ rows
    def select(
        self,
        table: str,
        columns: Sequence[str] | None = None,
        *,
        where: Mapping[str, Any] | None = None,
        like: Mapping[str, str] | None = None,
        null: Sequence[str] = (),
        not_null: Sequence[str] = (),
        order_by: Sequence[str] = (),
        distinct: bool = False,
    ) -> list[tuple[Any, ...]]:
        """Rows of one table: `columns` (all when None) where every `where` column equals its
        value, every `like` column matches its pattern, `null` columns are NULL and `not_null`
        ones are not; in `order_by` order (else the table's key order)."""
        table = self._table(table)
        names = self.columns(table) if columns is None else self._columns(table, columns)
        clause, params = self._where(table, where, like, null, not_null)
        order = self._columns(table, order_by) if order_by else [self.columns(table)[0]]
        head = "SELECT DISTINCT" if distinct else "SELECT"
        query = f"{head} {','.join(names)} FROM {table}{clause} ORDER BY {','.join(order)}"
        return self.on_writer(lambda: self.db.execute(query, params).fetchall())

    def count(
        self,
        table: str,
        *,
        where: Mapping[str, Any] | None = None,
        like: Mapping[str, str] | None = None,
        null: Sequence[str] = (),
        not_null: Sequence[str] = (),
        distinct: str | None = None,
    ) -> int:
        table = self._table(table)
        clause, params = self._where(table, where, like, null, not_null)
        what = "*" if distinct is None else f"DISTINCT {self._columns(table, [distinct])[0]}"
        query = f"SELECT COUNT({what}) FROM {table}{clause}"
        return int(self.on_writer(lambda: self.db.execute(query, params).fetchone()[0]))

    def flag_counts(self, table: str) -> dict[str, int]:
        """Rows per flag of a table that has a `flag` column ({} for one that has none)."""
        if "flag" not in self.columns(table):
            return {}
        query = f"SELECT flag, COUNT(*) FROM {table} WHERE flag IS NOT NULL GROUP BY flag"
        return dict(self.on_writer(lambda: self.db.execute(query).fetchall()))

    def _where(
        self,
        table: str,
        where: Mapping[str, Any] | None,
        like: Mapping[str, str] | None,
        null: Sequence[str],
        not_null: Sequence[str],
    ) -> tuple[str, list[Any]]:
        parts: list[str] = []
        params: list[Any] = []
        for name, value in (where or {}).items():
            parts.append(f"{self._columns(table, [name])[0]} = ?")
            params.append(value)
        for name, pattern in (like or {}).items():
            parts.append(f"{self._columns(table, [name])[0]} LIKE ?")
            params.append(pattern)
        parts += [f"{c} IS NULL" for c in self._columns(table, null)]
        parts += [f"{c} IS NOT NULL" for c in self._columns(table, not_null)]
        return (" WHERE " + " AND ".join(parts) if parts else ""), params

    def dump(self, table: str) -> list[tuple[Any, ...]]:
        """Every row, sorted: what two runs are compared by."""
        return sorted(self.select(table), key=repr)

    def frame(self, table: str) -> Any:
        """The table in key order: lanes commit in whatever order their calls finish, so the
        order rows were written in is not part of a run's result."""
        import pandas as pd

        key = self.columns(table)[0]
        return pd.read_sql_query(f"SELECT * FROM {table} ORDER BY {key}", self.db)

    # ------------------------------------------------------------------ call records
    def with_call_fields(
        self,
        table: str,
        columns: Sequence[str],
        fields: Sequence[Field],
        *,
        present: Field | None = None,
        not_null: Sequence[str] = (),
        order_by: Sequence[str] = (),
    ) -> list[tuple[Any, ...]]:
        """Rows of `table` (which names its call in `call_key`) with fields of that call's
        record: `columns` of the row, then the call's kind, then each field (the first path of a
        tuple that is present; None where none is, or the row has no call). `present`: only rows
        whose call record has that field. Read inside SQLite, so a large run's per-node records
        are never parsed in Python."""
        table = self._table(table)
        names = [f"t.{c}" for c in self._columns(table, [*columns, "call_key"])[:-1]]
        picked = [_json("c.result", f) for f in fields]
        parts = [f"t.{c} IS NOT NULL" for c in self._columns(table, not_null)]
        if present is not None:
            parts.append(f"{_json('c.result', present)} IS NOT NULL")
        clause = " WHERE " + " AND ".join(parts) if parts else ""
        order = self._columns(table, order_by) if order_by else [self.columns(table)[0]]
        query = (
            f"SELECT {','.join([*names, 'c.kind', *picked])} FROM {table} t LEFT JOIN calls c "
            f"ON c.key = t.call_key{clause} ORDER BY {','.join('t.' + o for o in order)}"
        )
        return self.on_writer(lambda: self.db.execute(query).fetchall())

    def with_judgments(
        self,
        table: str,
        key: str,
        target_kind: str,
        columns: Sequence[str],
        judged: Sequence[str],
    ) -> list[tuple[Any, ...]]:
        """Each judgment of `target_kind` with the row of `table` it judged (its target_id is
        the row's `key`): the row's `columns`, then the judgment's `judged` columns, in
        judgment order."""
        table = self._table(table)
        own = self._columns(table, [*columns, key])
        theirs = self._columns("judgments", judged)
        picked = [f"t.{c}" for c in own[:-1]] + [f"j.{c}" for c in theirs]
        query = (
            f"SELECT {','.join(picked)} FROM {table} t JOIN judgments j ON j.target_kind = ? "
            f"AND j.target_id = t.{own[-1]} ORDER BY j.judgment_id"
        )
        return self.on_writer(lambda: self.db.execute(query, (target_kind,)).fetchall())

    def call_totals(self, fields: Sequence[Field], since: float) -> list[tuple[Any, ...]]:
        """Per call kind × model: calls, calls made at or after `since` (the call records'
        clock), then for each field the sum over the records that state it and how many do."""
        sums = []
        for f in fields:
            path = _json("result", f)
            sums += [f"SUM({path})", f"COUNT({path})"]
        query = (
            f"SELECT kind, model, COUNT(*), SUM(created >= ?), {','.join(sums)} FROM calls "
            "GROUP BY kind, model ORDER BY kind, model"
        )
        return self.on_writer(lambda: self.db.execute(query, (since,)).fetchall())

    def judge_asks(self) -> list[JudgeAsks]:
        """Per judge (the calls' model column holds the design's judge id) and question, from
        its call records: readings, and the prompts / HTTP requests they state."""
        query = (
            "SELECT model, json_extract(request, '$.question') AS question, COUNT(*), "
            "SUM(json_extract(result, '$.requests')), COUNT(json_extract(result, '$.requests')), "
            "SUM(json_extract(result, '$.http_requests')) "
            "FROM calls WHERE kind = 'judge' GROUP BY model, question ORDER BY model, question"
        )
        rows = self.on_writer(lambda: self.db.execute(query).fetchall())
        return [
            JudgeAsks(
                judge,
                str(question),
                int(n),
                int(prompts) if counted else None,
                float(http) if counted else None,
            )  # fmt: skip
            for judge, question, n, prompts, counted, http in rows
        ]

    def calls_of(
        self, kinds: Sequence[str] = (), *, like_key: str | None = None
    ) -> list[tuple[Any, ...]]:
        """(key, kind, model, request, result) of the calls of these kinds (all when empty;
        `like_key`: keys matching the pattern), in key order."""
        parts: list[str] = []
        params: list[Any] = []
        if kinds:
            parts.append(f"kind IN ({','.join('?' for _ in kinds)})")
            params += list(kinds)
        if like_key is not None:
            parts.append("key LIKE ?")
            params.append(like_key)
        clause = " WHERE " + " AND ".join(parts) if parts else ""
        query = f"SELECT key, kind, model, request, result FROM calls{clause} ORDER BY key"
        return self.on_writer(lambda: self.db.execute(query, params).fetchall())


def _json(column: str, field: Field) -> str:
    paths = (field,) if isinstance(field, str) else field
    for path in paths:
        if not _PATH.match(path):
            raise ValueError(f"not a JSON path of names and indices: {path!r}")
    parts = [f"json_extract({column}, '{p}')" for p in paths]
    return parts[0] if len(parts) == 1 else f"coalesce({', '.join(parts)})"
