"""The run store: one SQLite file per run (WAL, one writer, short transactions).

`calls` is the cache and the record of every model call: a key (hash of the model's identity and
everything in the request that determines the result — never transport settings or keys) → the
result as returned. Every model call of the lab goes through one door, `cached_calls`: stored
results are returned, the rest are computed, stored (with the rows made from them, in one
transaction per batch) and returned. Calls may be in flight on several threads at once
(experiments/engine/lanes.py), but the store keeps one writer: while lanes run, every read and
write a worker asks for is handed to the thread that opened the store and done there, so batches
stay all-or-nothing and SQLite sees one connection used by one thread. The other tables are what
an experiment made of its calls: `judgments` (the engine's) and the tables of the experiment
kind's row types, each row naming the call it came from. A killed run loses at most the batch in
flight."""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import fields
from functools import cache
from pathlib import Path
from typing import Any

from diarylab.experiments.engine.executor import Executor, InProcess
from diarylab.experiments.engine.store.edits import StoreEdits
from diarylab.experiments.engine.store.schema import (
    ENGINE_SCHEMA,
    SCHEMA_VERSION,
    JudgmentRow,
    Row,
    call_key,
    table_sql,
)
from diarylab.experiments.engine.writer import OneWriter
from diarylab.foundation.errors import LabError

__all__ = ["Store"]


class Store(OneWriter, StoreEdits):
    def __init__(self, path: Path, row_types: Sequence[type[Row]] = ()) -> None:
        self.path = Path(path)
        self.db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=NORMAL")
        self._check_version()
        self.db.executescript(ENGINE_SCHEMA)
        known: list[type[Row]] = [JudgmentRow, *row_types]
        self.row_types: dict[str, type[Row]] = {t.TABLE: t for t in known}
        for row_type in self.row_types.values():
            self.db.execute(table_sql(row_type))
        self.db.execute(
            "INSERT OR IGNORE INTO meta VALUES ('schema_version', ?)", (SCHEMA_VERSION,)
        )
        self.made = 0
        self.cached = 0
        # results a run found already stored and did not ask for again (a resumed run's
        # finished texts and readings): read from the store as much as a cached call is
        self.kept = 0
        # Call kinds this store may read but never make: a derived run's writing and chatbot
        # calls (experiments/derived/reuse.py), all copied in from the run it reuses.
        self.sealed: frozenset[str] = frozenset()
        # Where batches are computed (experiments/engine/executor.py); the runner sets the
        # run's own, every other store computes here.
        self.executor: Executor = InProcess()
        OneWriter.__init__(self)

    def _check_version(self) -> None:
        tables = {r[0] for r in self.db.execute("SELECT name FROM sqlite_master")}
        if "calls" not in tables:
            return
        version = None
        if "meta" in tables:
            row = self.db.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
            version = row[0] if row else None
        if version is not None and not str(version).isdigit():
            version = "unreadable"
        if version not in (None, "unreadable") and int(str(version)) > int(SCHEMA_VERSION):
            self.db.close()
            raise LabError(
                f"this store was written by a later diarylab (store schema {version}, this "
                f"version reads {SCHEMA_VERSION})",
                where=str(self.path),
                fix="open it with the diarylab version that wrote it (the run folder's "
                "manifest names it), or upgrade diarylab",
            )
        if version != SCHEMA_VERSION:
            self.db.close()
            raise LabError(
                f"this store was written by an older diarylab (store schema {version or 1}, "
                f"this version reads {SCHEMA_VERSION})",
                where=str(self.path),
                fix="run the design into a new folder (--out); old run folders are not converted",
            )

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

    # ------------------------------------------------------------------ the cached-call door
    def cached_calls(
        self,
        kind: str,
        model: str,
        identity: Mapping[str, Any],
        requests: Sequence[Mapping[str, Any]],
        compute: Callable[[list[int]], Sequence[Mapping[str, Any]]],
        *,
        rows: Callable[[int, Mapping[str, Any], str], Sequence[Any]] | None = None,
        batch_size: int = 1,
        done: Callable[[int], None] | None = None,
    ) -> list[dict[str, Any]]:
        """The results of `requests` (what determines each result besides `identity`), in
        order. Stored ones are read back; the rest are computed by `compute(indices)` a batch of
        `batch_size` at a time, each batch stored all-or-nothing with `rows(index, result, key)`
        before it is returned. Rows of read-back calls are written too (idempotently), so a run
        killed between a call and its rows cannot happen and a shared call serves every row."""
        keys = [call_key(kind, identity, r) for r in requests]
        results: list[dict[str, Any] | None] = [None] * len(requests)
        first_of: dict[str, int] = {}

        def look_up() -> list[int]:
            pending: list[int] = []
            for i, key in enumerate(keys):
                found = self._get(key)
                if found is not None:
                    results[i] = found
                    self.cached += 1
                elif key in first_of:
                    continue  # the same request twice: computed once, below
                else:
                    first_of[key] = i
                    pending.append(i)
            read_back = [i for i, r in enumerate(results) if r is not None]
            if rows is not None and read_back:
                with self.transaction() as db:
                    for i in read_back:
                        for row in rows(i, results[i] or {}, keys[i]):
                            self._insert(db, row)
            if done and read_back:
                done(len(read_back))
            return pending

        def keep(batch: list[int], computed: list[Mapping[str, Any]]) -> None:
            inserted = 0
            with self.transaction() as db:
                for i, result in zip(batch, computed, strict=True):
                    text = json.dumps(result, sort_keys=True)
                    added = db.execute(
                        "INSERT OR IGNORE INTO calls VALUES (?, ?, ?, ?, ?, ?)",
                        (
                            keys[i],
                            kind,
                            model,
                            json.dumps(requests[i], sort_keys=True, default=str),
                            text,
                            time.time(),
                        ),
                    ).rowcount
                    inserted += added
                    # What is used is what was stored, read back as a resume reads it; another
                    # lane may have stored the same call first: its result is the one kept.
                    stored = json.loads(text) if added else self._get(keys[i])
                    results[i] = stored
                    for row in rows(i, stored or {}, keys[i]) if rows else ():
                        self._insert(db, row)
            self.made += inserted  # calls this run added to the store, so the two always agree
            if done:
                done(len(batch))

        pending = self.on_writer(look_up)
        if pending and kind in self.sealed:
            raise LabError(
                f"a derived run found {len(pending)} {kind} call(s) missing from the texts it "
                f"reuses (first request: {json.dumps(requests[pending[0]], default=str)[:160]})",
                where=str(self.path),
                fix="the design asks for a text the reused run never wrote: make a new run "
                "instead of deriving this one (or report the mismatch as a bug)",
            )
        step = max(1, batch_size)
        batches = [pending[start : start + step] for start in range(0, len(pending), step)]
        # The model calls: here on the caller's own thread, or — a local model's or a judge's,
        # under the Ray executor — on actors, several batches at once, each back here as it is
        # ready.
        to_actors = identity.get("kind") == "local" or kind == "judge"
        for batch, done_batch in self.executor.batches(
            compute, batches, label=f"{kind} {model}", to_actors=to_actors
        ):
            computed = list(done_batch)
            if len(computed) != len(batch):
                raise RuntimeError(f"{len(computed)} results for {len(batch)} requests")
            self.on_writer(lambda batch=batch, computed=computed: keep(batch, computed))  # type: ignore[misc]

        def share() -> None:
            # Duplicates of a request computed in this call share its result (and its rows).
            late = [i for i, r in enumerate(results) if r is None]
            for i in late:
                results[i] = results[first_of[keys[i]]]
            if rows is not None and late:
                with self.transaction() as db:
                    for i in late:
                        for row in rows(i, results[i] or {}, keys[i]):
                            self._insert(db, row)
                if done:
                    done(len(late))

        self.on_writer(share)
        return [r if r is not None else {} for r in results]

    def _get(self, key: str) -> dict[str, Any] | None:
        row = self.db.execute("SELECT result FROM calls WHERE key=?", (key,)).fetchone()
        return None if row is None else dict(json.loads(row[0]))

    def add_row_types(self, *row_types: type[Row]) -> None:
        """Tables a command beside the kind keeps in the run's store (human ratings): made if
        missing, then written like the kind's own rows."""
        statements = [table_sql(t) for t in row_types]

        def make() -> None:
            for sql in statements:
                self.db.execute(sql)

        self.on_writer(make)
        self.row_types.update({t.TABLE: t for t in row_types})

    # ------------------------------------------------------------------ rows without a call
    def put_rows(self, *rows: Any) -> None:
        """Rows that no model call made (a fixed reply): written in one transaction."""

        def put() -> None:
            with self.transaction() as db:
                for row in rows:
                    self._insert(db, row)

        self.on_writer(put)

    def _insert(self, db: sqlite3.Connection, row: Any) -> None:
        table = row.TABLE
        if table not in self.row_types:
            raise RuntimeError(f"the store has no table {table}")
        sql, names = _insert_sql(row.__class__)
        db.execute(sql, tuple(getattr(row, name) for name in names))

    # ------------------------------------------------------------------ reads
    def get(self, row_type: Any, ident: str) -> Any:
        """The row of `row_type` whose key is `ident`, or None."""
        key = fields(row_type)[0].name
        query = f"SELECT * FROM {row_type.TABLE} WHERE {key}=?"
        found = self.on_writer(lambda: self.db.execute(query, (ident,)).fetchone())
        return None if found is None else row_type(*found)

    def has(self, row_type: Any, ident: str) -> bool:
        key = fields(row_type)[0].name
        query = f"SELECT 1 FROM {row_type.TABLE} WHERE {key}=?"
        return self.on_writer(lambda: self.db.execute(query, (ident,)).fetchone()) is not None

    def ids(self, row_type: Any) -> set[str]:
        query = f"SELECT {fields(row_type)[0].name} FROM {row_type.TABLE}"
        return self.on_writer(lambda: {r[0] for r in self.db.execute(query)})


@cache
def _insert_sql(row_type: Any) -> tuple[str, tuple[str, ...]]:
    """A row type's INSERT statement and its field names, in order (worked out once per type:
    a run inserts a row per reading). Rows hold plain values, so reading the fields is what
    asdict gave without its deep copy."""
    names = tuple(f.name for f in fields(row_type))
    marks = ", ".join("?" for _ in names)
    return f"INSERT OR IGNORE INTO {row_type.TABLE} ({', '.join(names)}) VALUES ({marks})", names
