"""Encoding judge prompts a line at a time, each line's tokens remembered: a study's prompts are
made of the same lines over and over — a template's lines in every prompt, a letter's lines in
each of its four scores and its identity check, a diary's earlier entries and replies in every
later reply's fifteen questions. Encoding every prompt whole re-encoded them each time, which at
paper size was the largest part of a served judge's client time after rendering
(docs/scaling.md).

A prompt is cut right after a line break, and only where the tokenizer starts a new token there
and reads what follows alone as it does after what comes before. Both are decided by the text
around the cut, as group_encoding.py explains (a tokenizer pre-splits text by patterns that look
a character or two past a split, and merges only within the pieces): so a cut is checked once
per tokenizer and the text around it, by encoding that text whole and cut in two. A cut that
fails its check is not made, and the lines on both sides are encoded as one piece. A tokenizer
with a normalizer, or without a fast backend, encodes every prompt whole.
tests/rubric/test_line_encoding.py holds the result equal to encoding each prompt whole, for every
tokenizer shape the lab tests and the seed judges' own vocabularies."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from weakref import WeakKeyDictionary

MIN_FIXED = 8  # characters on each side of a cut that decide it (blanks before it count extra)
KEPT = 50_000  # pieces (and checked cuts) remembered per tokenizer before starting afresh


class _Known:
    """Per tokenizer: each piece's ids, and whether a cut (the text around it, its place in
    that text) gives the whole encoding."""

    def __init__(self) -> None:
        self.pieces: dict[str, list[int]] = {}
        self.cuts: dict[tuple[str, int], bool] = {}


_KNOWN: WeakKeyDictionary[Any, _Known] = WeakKeyDictionary()
_Cut = tuple[int, tuple[str, int]]  # where a cut falls, and the text around it with its place


def encode_whole(tokenizer: Any, texts: Sequence[str]) -> list[list[int]]:
    # One tokenizer call for the lot: a fast tokenizer encodes a batch in Rust, each text
    # exactly as alone.
    return [list(ids) for ids in tokenizer(list(texts), add_special_tokens=False)["input_ids"]]


def encode_texts(tokenizer: Any, texts: Sequence[str]) -> list[list[int]]:
    """Every text's token ids (no special tokens added), equal to encoding each whole."""
    if not texts:
        return []
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is None or backend.normalizer is not None:
        return encode_whole(tokenizer, texts)
    known = _KNOWN.get(tokenizer)
    if known is None:
        known = _KNOWN[tokenizer] = _Known()
    if len(known.pieces) > KEPT or len(known.cuts) > KEPT:
        # afresh, not cleared: a judge on another thread may be using the same tokenizer's
        known.pieces, known.cuts = {}, {}
    remembered, cuts = known.pieces, known.cuts
    keyed = [[(cut, text_around(text, cut)) for cut in _line_starts(text)] for text in texts]
    _check_cuts(tokenizer, cuts, keyed)
    split = [_pieces(text, keys, cuts) for text, keys in zip(texts, keyed, strict=True)]
    missing = list({piece for pieces in split for piece in pieces if piece not in remembered})
    if missing:
        remembered.update(zip(missing, encode_whole(tokenizer, missing), strict=True))
    out = []
    for pieces in split:
        ids: list[int] = []
        for piece in pieces:
            ids += remembered[piece]
        out.append(ids)
    return out


def _line_starts(text: str) -> list[int]:
    """Where a line begins after a break (not inside a run of breaks), but for the first."""
    out = []
    at = text.find("\n")
    while 0 <= at < len(text) - 1:
        nxt = at + 1
        if text[nxt] != "\n":
            out.append(nxt)
        at = text.find("\n", nxt)
    return out


def text_around(text: str, cut: int) -> tuple[str, int]:
    """The text that decides a cut and the cut's place in it: MIN_FIXED characters after it,
    and before it every blank up to MIN_FIXED other characters (a run of blanks is split by
    how it ends and what follows it, so the whole run counts)."""
    start, marks = cut, 0
    while start > 0 and marks < MIN_FIXED:
        start -= 1
        marks += not text[start].isspace()
    return text[start : cut + MIN_FIXED], cut - start


def _check_cuts(
    tokenizer: Any, cuts: dict[tuple[str, int], bool], keyed: Sequence[list[_Cut]]
) -> None:
    """Check every cut not yet known, in one tokenizer call."""
    order = list({key for keys in keyed for _, key in keys if key not in cuts})
    if not order:
        return
    asked = [part for window, at in order for part in (window, window[:at], window[at:])]
    encoded = encode_whole(tokenizer, asked)
    for k, key in enumerate(order):
        whole, before, after = encoded[3 * k : 3 * k + 3]
        cuts[key] = bool(before) and bool(after) and whole == before + after


def _pieces(text: str, keys: list[_Cut], cuts: dict[tuple[str, int], bool]) -> list[str]:
    out, start = [], 0
    for cut, key in keys:
        if cuts[key]:
            out.append(text[start:cut])
            start = cut
    out.append(text[start:])
    return out
