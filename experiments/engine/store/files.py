"""What works on whole store files rather than one open run: the texts a derived run reuses
(experiments/engine/reuse.py says which and why) — read from a finished run's store without
touching its folder, hashed, copied into the derived run's store with the record of what was
reused — and a folder's integrity check of its store file."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from diarylab.experiments.engine.store.core import Store
from diarylab.foundation.errors import LabError

META_KEY = "derived_from"  # the store's record of what it reused (a resume needs no source)


@dataclass(frozen=True)
class Texts:
    """What a store holds of the texts one kind reuses."""

    sha256: str
    calls: int  # calls of the kind's text_calls kinds (its writing and chatbot calls)
    rows: Mapping[str, int]  # text table → rows


def _read_only(path: Path) -> sqlite3.Connection:
    # immutable: hashing a finished run must not create -wal/-shm files in its folder
    return sqlite3.connect(f"file:{path}?mode=ro&immutable=1", uri=True)


def _text_rows(
    db: sqlite3.Connection, tables: Sequence[str], calls: Sequence[str]
) -> Iterator[tuple[str, list[Any]]]:
    marks = ",".join("?" for _ in calls)
    query = (
        f"SELECT key, kind, model, request, result FROM calls WHERE kind IN ({marks}) ORDER BY key"
    )
    for row in db.execute(query, tuple(calls)):
        yield "calls", list(row)
    for table in tables:
        key = db.execute(f"SELECT * FROM {table} LIMIT 0").description[0][0]
        for row in db.execute(f"SELECT * FROM {table} ORDER BY {key}"):
            yield table, list(row)


def texts_of(db: sqlite3.Connection, tables: Sequence[str], call_kinds: Sequence[str]) -> Texts:
    """The texts' hash and counts: the calls of `call_kinds` (a kind's text_calls) and the rows
    of `tables`, in key order, without the time a call was made."""
    digest = hashlib.sha256()
    counts: dict[str, int] = {"calls": 0, **dict.fromkeys(tables, 0)}
    for table, row in _text_rows(db, tables, call_kinds):
        digest.update(json.dumps([table, row], separators=(",", ":")).encode() + b"\n")
        counts[table] += 1
    calls = counts.pop("calls")
    return Texts(digest.hexdigest(), calls, counts)


def store_texts(path: Path, row_types: Sequence[Any], calls: Sequence[str]) -> Texts:
    """The texts a finished run's store holds, read without touching its folder."""
    db = _read_only(path)
    try:
        return texts_of(db, [t.TABLE for t in row_types], calls)
    except sqlite3.DatabaseError as exc:
        raise LabError(
            f"the reused run's store cannot be read ({exc})",
            where=str(path),
            fix="restore the run folder, or name another run in derived_from.run",
        ) from None
    finally:
        db.close()


def present_ids(path: Path, row_type: Any) -> set[str]:
    db = _read_only(path)
    try:
        key = fields(row_type)[0].name
        return {r[0] for r in db.execute(f"SELECT {key} FROM {row_type.TABLE}")}
    finally:
        db.close()


def reused_record(store: Store) -> dict[str, Any] | None:
    """What a derived store records it reused, once its copy is complete."""
    row = store.on_writer(
        lambda: store.db.execute("SELECT value FROM meta WHERE key=?", (META_KEY,)).fetchone()
    )
    return None if row is None else dict(json.loads(row[0]))


def recorded_in(path: Path) -> dict[str, Any] | None:
    """What the store at `path` records it reused, read without opening it for writing (a
    resume asks before it holds the folder's lock)."""
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master")}
        if "meta" not in tables:
            return None
        row = db.execute("SELECT value FROM meta WHERE key=?", (META_KEY,)).fetchone()
        return None if row is None else dict(json.loads(row[0]))
    finally:
        db.close()


def copy_texts(
    source: Path,
    store: Store,
    row_types: Sequence[Any],
    calls: Sequence[str],
    record: Mapping[str, Any],
) -> Texts:
    """Every call of the store at `source` and its text rows into `store`, in one transaction
    with `record` (so a killed copy leaves nothing, and a finished one is never redone); the
    copy's texts hash must equal the source's."""
    tables = [t.TABLE for t in row_types]

    def copy() -> Texts:
        db = store.db
        src = _read_only(source)
        try:
            with store.transaction():
                for table in ("calls", *tables):
                    cursor = src.execute(f"SELECT * FROM {table}")
                    columns = [c[0] for c in cursor.description]
                    marks = ",".join("?" for _ in columns)
                    db.executemany(
                        f"INSERT OR IGNORE INTO {table} ({','.join(columns)}) VALUES ({marks})",
                        cursor,
                    )
                copied = texts_of(db, tables, calls)
                locked = str(record.get("texts_sha256"))
                if copied.sha256 != locked:
                    raise LabError(
                        "the copy of the reused texts differs from the run's own (texts sha256 "
                        f"{copied.sha256[:12]}…, the run's {locked[:12]}…)",
                        where=str(store.path),
                        fix="run the derived design into a new, empty folder (--out)",
                    )
                db.execute(
                    "INSERT OR REPLACE INTO meta VALUES (?, ?)",
                    (META_KEY, json.dumps(dict(record), sort_keys=True)),
                )
        finally:
            src.close()
        return copied

    return store.on_writer(copy)


def check_file(path: Path, *, full: bool) -> tuple[list[str], set[str]]:
    """SQLite's own check of a store file ("integrity_check" when `full`, else the quicker
    "quick_check"): its answer lines and the file's table names. Opened immutable: a check must
    not create -wal/-shm files beside a store it may refuse. Raises sqlite3.DatabaseError for a
    file that is no database."""
    db = sqlite3.connect(f"file:{path}?mode=ro&immutable=1", uri=True)
    try:
        pragma = "integrity_check" if full else "quick_check"
        rows = [str(r[0]) for r in db.execute(f"PRAGMA {pragma}")]
        tables = {str(r[0]) for r in db.execute("SELECT name FROM sqlite_master")}
    finally:
        db.close()
    return rows, tables


def calls_stored(path: Path) -> int:
    """How many calls a store holds now, read without writing to it (a running run's store may be
    watched this way: progress, a kill at a given point); 0 before its calls table exists."""
    if not Path(path).exists():
        return 0
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return int(db.execute("SELECT COUNT(*) FROM calls").fetchone()[0])
    except sqlite3.OperationalError:  # not made yet, or locked for the moment it takes
        return 0
    finally:
        db.close()
