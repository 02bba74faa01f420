"""The store side of derived runs (experiments/derived/reuse.py): what locks the texts a run reuses,
copying them into the derived run's store, and which parts of a design determine those texts.

The texts of a run are its writing and chatbot calls (the `calls` rows of the kinds its kind
names in `text_calls`) and the kind's text rows (entries and replies, letters, benchmark
replies: fixed replies are rows without a call). Their sha256 is taken over those rows in key
order, without the time a call was made, so it changes only when a text does: a run's judgments
may be added or remade and the hash stays. A derived store gets every call of the run it reuses
(the judges' too: a judge the two designs share reads from them, so its readings are the run's
own) and the text rows; its writing and chatbot calls are then sealed (Store.sealed), so a text
the copy lacks is one clear error, never a new generation."""

from __future__ import annotations

from typing import Any

# The store files' side (reading a finished run's texts, copying them, the derived store's
# record) is the store package's: experiments/engine/store/files.py.
from diarylab.experiments.engine.store.files import (
    META_KEY,
    Texts,
    copy_texts,
    present_ids,
    recorded_in,
    reused_record,
    store_texts,
    texts_of,
)

__all__ = [
    "META_KEY",
    "TRANSPORT",
    "Texts",
    "copy_texts",
    "first_difference",
    "present_ids",
    "recorded_in",
    "reused_record",
    "store_texts",
    "text_view",
    "texts_of",
]

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
