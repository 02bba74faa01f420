"""The store side of derived runs (experiments/derived.py): what locks the texts a run reuses,
copying them into the derived run's store, and which parts of a design determine those texts.

The texts of a run are its writing and chatbot calls (the `calls` rows of kinds TEXT_CALLS) and
the kind's text rows (entries and replies, letters, benchmark replies: fixed replies are rows
without a call). Their sha256 is taken over those rows in key order, without the time a call was
made, so it changes only when a text does: a run's judgments may be added or remade and the
hash stays. A derived store gets every call of the run it reuses (the judges' too: a judge the
two designs share reads from them, so its readings are the run's own) and the text rows; its
writing and chatbot calls are then sealed (Store.sealed), so a text the copy lacks is one clear
error, never a new generation."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from diarylab.experiments.engine.store import Store
from diarylab.foundation.errors import LabError

TEXT_CALLS = ("diarist", "chatbot")  # the call kinds whose results are the reused texts
META_KEY = "derived_from"  # the store's record of what it reused (a resume needs no source)

# How a model is reached or batched, never what it writes: may differ between the two designs.
TRANSPORT = (
    "diarist_model.local.batch_size",
    "diarist_model.local.device",
    "diarist_model.vllm",
    "chatbots.*.endpoint",
    "chatbots.*.local.batch_size",
    "chatbots.*.local.device",
    "chatbots.*.vllm",
    "profiles.*.extraction.batch_size",
)


@dataclass(frozen=True)
class Texts:
    """What a store holds of the texts one kind reuses."""

    sha256: str
    calls: int  # writing and chatbot calls
    rows: Mapping[str, int]  # text table → rows


def _read_only(path: Path) -> sqlite3.Connection:
    # immutable: hashing a finished run must not create -wal/-shm files in its folder
    return sqlite3.connect(f"file:{path}?mode=ro&immutable=1", uri=True)


def _text_rows(db: sqlite3.Connection, tables: Sequence[str]) -> Iterator[tuple[str, list[Any]]]:
    marks = ",".join("?" for _ in TEXT_CALLS)
    query = (
        f"SELECT key, kind, model, request, result FROM calls WHERE kind IN ({marks}) ORDER BY key"
    )
    for row in db.execute(query, TEXT_CALLS):
        yield "calls", list(row)
    for table in tables:
        key = db.execute(f"SELECT * FROM {table} LIMIT 0").description[0][0]
        for row in db.execute(f"SELECT * FROM {table} ORDER BY {key}"):
            yield table, list(row)


def texts_of(db: sqlite3.Connection, tables: Sequence[str]) -> Texts:
    digest = hashlib.sha256()
    counts: dict[str, int] = {"calls": 0, **dict.fromkeys(tables, 0)}
    for table, row in _text_rows(db, tables):
        digest.update(json.dumps([table, row], separators=(",", ":")).encode() + b"\n")
        counts[table] += 1
    calls = counts.pop("calls")
    return Texts(digest.hexdigest(), calls, counts)


def store_texts(path: Path, row_types: Sequence[Any]) -> Texts:
    """The texts a finished run's store holds, read without touching its folder."""
    db = _read_only(path)
    try:
        return texts_of(db, [t.TABLE for t in row_types])
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
    source: Path, store: Store, row_types: Sequence[Any], record: Mapping[str, Any]
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
                copied = texts_of(db, tables)
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


# ----------------------------------------------------------------------------- designs
def text_view(spec: Any) -> dict[str, Any]:
    """The part of a validated design that determines its texts: everything but the fields
    its schema lets a derived design change, those compared apart, and transport settings."""
    data = spec.model_dump(mode="json")
    for path in (*spec.judging_fields, *spec.compared_apart, *TRANSPORT):
        _drop(data, path.split("."))
    return data


def _drop(data: Any, parts: list[str]) -> None:
    if not parts:
        return
    head, rest = parts[0], parts[1:]
    if head == "*" and isinstance(data, list):
        for item in data:
            _drop(item, rest)
    elif isinstance(data, dict) and head in data:
        if rest:
            _drop(data[head], rest)
        else:
            del data[head]


def first_difference(a: Any, b: Any, path: str = "") -> str | None:
    """The dotted path of the first place two JSON values differ (None when equal)."""
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b)):
            where = f"{path}.{key}" if path else key
            if key not in a or key not in b:
                return where
            found = first_difference(a[key], b[key], where)
            if found:
                return found
        return None
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return path
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            found = first_difference(x, y, f"{path}[{i}]")
            if found:
                return found
        return None
    return None if a == b else path
