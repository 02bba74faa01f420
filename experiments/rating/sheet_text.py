"""The rater-facing words of a rating sheet (rating_sheet.toml), read through a typed schema."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from diarylab.foundation.datafiles import HashedDataFile

SHEET_FILE = Path(__file__).parent / "rating_sheet.toml"


class SheetText(HashedDataFile):
    """`[sheet]`: the instructions and headings a rater reads; `sha256` is the file's."""

    file_table = "sheet"

    id: str
    version: int
    title: str
    instructions: str
    entry_heading: str
    reply_heading: str
    earlier_heading: str
    entry_marker: str  # stands for the entry inside a 0–100 question's words


@lru_cache(maxsize=1)
def sheet_text() -> SheetText:
    return SheetText.from_file(SHEET_FILE)
