"""Flagging replies that are refusals or empty (chatbots/refusals.toml holds the phrases)."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Annotated

from pydantic import Field

from diarylab.foundation.datafiles import DataModel, NonEmpty, load_data

REFUSALS_FILE = Path(__file__).parent / "refusals.toml"


class Refusals(DataModel):
    version: int
    openings: Annotated[tuple[NonEmpty, ...], Field(strict=False)]


class RefusalsFile(DataModel):
    refusals: Refusals


def load_refusals(path: Path = REFUSALS_FILE) -> Refusals:
    return load_data(path, RefusalsFile)[0].refusals


@lru_cache(maxsize=1)
def refusal_openings() -> tuple[str, ...]:
    return tuple(s.lower() for s in load_refusals().openings)


def classify(text: str, *, api_refusal: bool = False) -> str | None:
    stripped = text.strip().lower().replace("’", "'")
    if not stripped:
        return "empty"
    if api_refusal or stripped.startswith(refusal_openings()):
        return "refusal"
    return None
