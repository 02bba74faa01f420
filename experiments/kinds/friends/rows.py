"""The friends kind's store table: one row per letter (judgments are the engine's)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar


@dataclass(frozen=True)
class LetterRow:
    TABLE: ClassVar[str] = "letters"
    letter_id: str
    pair_id: str
    condition: str
    seat: str  # "A" | "B"
    writer: str  # the writer's role card
    friend: str  # the friend's role card
    profile: str  # the writer's profile id, "unsteered", or "fixed" (the fixed letter)
    pattern: str | None  # the writer's profile's pattern
    friend_profile: str
    letter_index: int  # the writer's own count: 1..letters
    position: int  # place in the exchange: 1..2 × letters
    text: str
    new_tokens: int | None
    flag: str | None  # "empty" | "truncated" | None
    call_key: str | None  # None for the fixed letter, which calls no model
