"""Flagging replies that are refusals or empty (chatbots/refusals.toml holds the phrases)."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from foundation.datafiles import load_toml, string_list, table

REFUSALS_FILE = Path(__file__).parent / "refusals.toml"


@lru_cache(maxsize=1)
def refusal_openings() -> tuple[str, ...]:
    data = table(load_toml(REFUSALS_FILE), "refusals", str(REFUSALS_FILE))
    return tuple(s.lower() for s in string_list(data, "openings", str(REFUSALS_FILE)))


def classify(text: str, *, api_refusal: bool = False) -> str | None:
    stripped = text.strip().lower().replace("’", "'")
    if not stripped:
        return "empty"
    if api_refusal or stripped.startswith(refusal_openings()):
        return "refusal"
    return None
