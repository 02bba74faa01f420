"""Expanding a design into cells (diarist × profile × chatbot) with stable ids, and the ids of
the entries and replies inside them. Pure: no models, no files beyond the design's own."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

from diarylab.experiments.kinds.diary.schema import DiaryDesignFile


@dataclass(frozen=True)
class Cell:
    id: str
    diarist: str
    profile: str
    chatbot: str
    entries: int

    def entry_id(self, k: int) -> str:
        return first_entry_id(self.diarist, self.profile) if k == 1 else f"{self.id}.e{k}"

    def reply_id(self, k: int) -> str:
        return f"{self.id}.r{k}"

    def twin_place(self, what: str, k: int) -> str:
        """Where entry or reply k sits, without the profile: a steered entry and its unsteered
        twin draw the same sampling noise (common random numbers), so they differ by the
        steering and what it led to, not by a different draw."""
        return (
            f"{self.diarist}.{what}{k}"
            if k == 1 and what == "e"
            else (f"{self.diarist}.{self.chatbot}.{what}{k}")
        )


def first_entry_id(diarist: str, profile: str) -> str:
    """Entry 1 is written once per diarist × profile and every chatbot answers it."""
    return f"{diarist}.{profile}.e1"


def expand(spec: DiaryDesignFile, profile_ids: Sequence[str]) -> list[Cell]:
    return [
        Cell(f"{d}.{p}.{c.id}", d, p, c.id, spec.design.entries)
        for d in spec.cast.diarist_ids
        for p in profile_ids
        for c in spec.chatbots
    ]


def derived_seed(design_seed: int, *parts: str) -> int:
    """A seed for one call, fixed by the design seed and the call's place in the design (not by
    the order calls happen to run in), so a resumed run draws exactly what an unbroken one would."""
    digest = hashlib.sha256(":".join([str(design_seed), *parts]).encode()).digest()
    return int.from_bytes(digest[:4], "big")
