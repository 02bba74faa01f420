"""The run store (one SQLite file per run): its schema (schema.py: version, engine tables,
row types, call keys), its writing core (core.py: the one cached-call door, rows,
transactions), the reads every report, page, export and check asks of it (reads.py), and what
works on whole store files — the texts a derived run reuses, a folder's integrity check
(files.py). All of the lab's SQL lives in this package."""

from diarylab.experiments.engine.store.core import Store
from diarylab.experiments.engine.store.reads import JudgeAsks
from diarylab.experiments.engine.store.schema import (
    ENGINE_SCHEMA,
    SCHEMA_VERSION,
    JudgmentRow,
    Row,
    call_key,
    table_sql,
)

__all__ = [
    "ENGINE_SCHEMA",
    "JudgeAsks",
    "JudgmentRow",
    "Row",
    "SCHEMA_VERSION",
    "Store",
    "call_key",
    "files",
    "table_sql",
]
