"""The diary experiment's store tables: entries and replies (judgments are the engine's)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

if TYPE_CHECKING:
    from diarylab.experiments.engine.store import Store
    from diarylab.experiments.kinds.diary.cells import Cell


@dataclass(frozen=True)
class EntryRow:
    TABLE: ClassVar[str] = "entries"
    entry_id: str
    diarist: str
    profile: str
    pattern: str | None
    chatbot: str | None  # None: the shared first entry every chatbot answers
    entry_index: int
    text: str
    new_tokens: int | None
    flag: str | None  # "empty" | "truncated" (the token cap cut it) | None
    call_key: str


@dataclass(frozen=True)
class ReplyRow:
    TABLE: ClassVar[str] = "replies"
    reply_id: str
    cell_id: str
    diarist: str
    profile: str
    pattern: str | None
    chatbot: str
    entry_index: int
    entry_id: str
    text: str
    flag: str | None  # "refusal" | "empty" | "truncated" | None
    call_key: str | None  # None for the fixed reply, which calls no model


def history(store: Store, cell: Cell, entries: int, replies: int) -> tuple[list[str], list[str]]:
    """The cell's first `entries` entries and first `replies` replies, from the store."""
    texts, answers = [], []
    for k in range(1, entries + 1):
        row = store.get(EntryRow, cell.entry_id(k))
        assert row is not None, f"entry {cell.entry_id(k)} missing"
        texts.append(row.text)
    for k in range(1, replies + 1):
        reply = store.get(ReplyRow, cell.reply_id(k))
        assert reply is not None, f"reply {cell.reply_id(k)} missing"
        answers.append(reply.text)
    return texts, answers
