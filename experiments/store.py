"""The run store: one SQLite file per run (WAL, one writer, short transactions).

`calls` is the cache and the record of every model call: a key (hash of everything that
determines the result, never transport settings or keys) → the result as returned. The other
tables are what the experiment made of those calls; each row names the call it came from. A row
and its call are written in one transaction, so a killed run loses at most the calls in flight."""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS calls (
    key TEXT PRIMARY KEY, kind TEXT NOT NULL, model TEXT NOT NULL,
    request TEXT NOT NULL, result TEXT NOT NULL, created REAL NOT NULL);
CREATE TABLE IF NOT EXISTS entries (
    entry_id TEXT PRIMARY KEY, diarist TEXT NOT NULL, profile TEXT NOT NULL, pattern TEXT,
    chatbot TEXT, entry_index INTEGER NOT NULL, text TEXT NOT NULL, new_tokens INTEGER,
    flag TEXT, call_key TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS replies (
    reply_id TEXT PRIMARY KEY, cell_id TEXT NOT NULL, diarist TEXT NOT NULL,
    profile TEXT NOT NULL, pattern TEXT, chatbot TEXT NOT NULL, entry_index INTEGER NOT NULL,
    entry_id TEXT NOT NULL, text TEXT NOT NULL, flag TEXT, call_key TEXT);
CREATE TABLE IF NOT EXISTS judgments (
    judgment_id TEXT PRIMARY KEY, target_kind TEXT NOT NULL, target_id TEXT NOT NULL,
    judge TEXT NOT NULL, item TEXT NOT NULL, value REAL, coverage REAL NOT NULL,
    readable INTEGER NOT NULL, template TEXT, call_key TEXT NOT NULL);
"""
DOMAIN_TABLES = ("entries", "replies", "judgments")


def call_key(kind: str, identity: Mapping[str, Any], request: Mapping[str, Any]) -> str:
    payload = json.dumps(
        {"kind": kind, "model": identity, "request": request},
        sort_keys=True,
        separators=(",", ":"),
        default=str,
    )
    return hashlib.sha256(payload.encode()).hexdigest()


@dataclass(frozen=True)
class EntryRow:
    entry_id: str
    diarist: str
    profile: str
    pattern: str | None
    chatbot: str | None  # None: the shared first entry every chatbot answers
    entry_index: int
    text: str
    new_tokens: int | None
    flag: str | None
    call_key: str


@dataclass(frozen=True)
class ReplyRow:
    reply_id: str
    cell_id: str
    diarist: str
    profile: str
    pattern: str | None
    chatbot: str
    entry_index: int
    entry_id: str
    text: str
    flag: str | None  # "refusal" | "empty" | None
    call_key: str | None  # None for the fixed reply, which calls no model


@dataclass(frozen=True)
class JudgmentRow:
    judgment_id: str
    target_kind: str  # "entry" | "reply"
    target_id: str
    judge: str
    item: str  # "pattern:<id>", "coherence", "realism", or a rubric question id
    value: float | None  # mean 0..100 or P(yes); None when unreadable
    coverage: float
    readable: bool
    template: str | None
    call_key: str


class Store:
    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=NORMAL")
        self.db.executescript(SCHEMA)
        self.made = 0
        self.cached = 0

    def close(self) -> None:
        self.db.close()

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        self.db.execute("BEGIN IMMEDIATE")
        try:
            yield self.db
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")

    # ------------------------------------------------------------------ meta
    def get_meta(self, key: str) -> str | None:
        row = self.db.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def set_meta(self, key: str, value: str) -> None:
        with self.transaction() as db:
            db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))

    # ------------------------------------------------------------------ calls
    def get_call(self, key: str) -> dict[str, Any] | None:
        row = self.db.execute("SELECT result FROM calls WHERE key=?", (key,)).fetchone()
        if row is None:
            return None
        self.cached += 1
        result: dict[str, Any] = json.loads(row[0])
        return result

    def put_call(
        self,
        key: str,
        kind: str,
        model: str,
        request: Mapping[str, Any],
        result: Mapping[str, Any],
        *rows: EntryRow | ReplyRow | JudgmentRow,
    ) -> None:
        """Store a call's result, with the rows made from it, in one transaction."""
        self.put_calls([(key, kind, model, request, result, rows)])

    def put_calls(
        self,
        calls: list[
            tuple[
                str,
                str,
                str,
                Mapping[str, Any],
                Mapping[str, Any],
                tuple[EntryRow | ReplyRow | JudgmentRow, ...],
            ]
        ],
    ) -> None:
        """Calls with their rows, all-or-nothing: calls made together in one batched pass are
        stored together, so a resumed run redoes the same batch rather than part of it."""
        with self.transaction() as db:
            for key, kind, model, request, result, rows in calls:
                db.execute(
                    "INSERT OR IGNORE INTO calls VALUES (?, ?, ?, ?, ?, ?)",
                    (
                        key,
                        kind,
                        model,
                        json.dumps(request, sort_keys=True, default=str),
                        json.dumps(result, sort_keys=True),
                        time.time(),
                    ),
                )
                for row in rows:
                    self._insert(db, row)
        self.made += len(calls)

    def put_rows(self, *rows: EntryRow | ReplyRow | JudgmentRow) -> None:
        with self.transaction() as db:
            for row in rows:
                self._insert(db, row)

    @staticmethod
    def _insert(db: sqlite3.Connection, row: EntryRow | ReplyRow | JudgmentRow) -> None:
        name = {EntryRow: "entries", ReplyRow: "replies", JudgmentRow: "judgments"}[type(row)]
        values = asdict(row)
        cols = ", ".join(values)
        marks = ", ".join("?" for _ in values)
        db.execute(
            f"INSERT OR IGNORE INTO {name} ({cols}) VALUES ({marks})", tuple(values.values())
        )

    # ------------------------------------------------------------------ reads
    def has(self, table: str, id_column: str, ident: str) -> bool:
        query = f"SELECT 1 FROM {table} WHERE {id_column}=?"
        return self.db.execute(query, (ident,)).fetchone() is not None

    def ids(self, table: str, id_column: str) -> set[str]:
        return {r[0] for r in self.db.execute(f"SELECT {id_column} FROM {table}")}

    def entry(self, entry_id: str) -> EntryRow | None:
        row = self.db.execute("SELECT * FROM entries WHERE entry_id=?", (entry_id,)).fetchone()
        return None if row is None else EntryRow(*row)

    def reply(self, reply_id: str) -> ReplyRow | None:
        row = self.db.execute("SELECT * FROM replies WHERE reply_id=?", (reply_id,)).fetchone()
        return None if row is None else ReplyRow(*row)

    def count(self, table: str) -> int:
        return int(self.db.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0])

    def dump(self, table: str) -> list[tuple[Any, ...]]:
        """Every row, sorted: what two runs are compared by."""
        return sorted(self.db.execute(f"SELECT * FROM {table}").fetchall(), key=repr)

    def frame(self, table: str) -> Any:
        import pandas as pd

        return pd.read_sql_query(f"SELECT * FROM {table}", self.db)
