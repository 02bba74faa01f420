"""The diary experiment's store tables: entries and replies (judgments are the engine's)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar


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
