"""The run store (one SQLite file per run): its writing core (core.py: the one cached-call door,
rows, transactions), the reads every report, page, export and check asks of it (reads.py), and
what works on whole store files — the texts a derived run reuses, a folder's integrity check
(files.py). All of the lab's SQL lives in this package."""

from diarylab.experiments.engine.store.core import (
    ENGINE_SCHEMA,
    SCHEMA_VERSION,
    JudgmentRow,
    Row,
    Store,
    call_key,
    table_sql,
)
from diarylab.experiments.engine.store.reads import JudgeAsks

__all__ = [
    "ENGINE_SCHEMA",
    "SCHEMA_VERSION",
    "JudgeAsks",
    "JudgmentRow",
    "Row",
    "Store",
    "call_key",
    "table_sql",
]
