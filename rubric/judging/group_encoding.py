"""Encoding a group of judge prompts that share a long beginning — a reply's fifteen rubric
questions each carry the whole conversation — without encoding that beginning once per prompt.
At paper size encoding those prompts was the largest part of a served judge's client time
(docs/scaling.md).

The prompts are cut near the start of the line where they begin to differ (shared_cuts), and
each prompt's tokens are the shared beginning's tokens followed by its own rest's. That is what
encoding it whole gives only where the tokenizer starts a new token at the cut and reads the
rest the same alone as after the beginning. Both are checked on the first prompt, against its
whole encoding, for each place the cut may go, until one holds.
What decides them lies at the cut: the beginning (the same in every prompt) and the first
characters after it (the same in every prompt too: at least MIN_FIXED of them before any prompt
differs). A tokenizer pre-splits text by patterns that look at most a character or two past a
split, and merges only within the pieces. So what holds for the first prompt holds for every
prompt of the group. Where the check fails (a SentencePiece tokenizer that marks the start of a
text, a tokenizer with a normalizer), every prompt is encoded whole, as before.
tests/test_group_encoding.py holds the result equal to encoding each prompt whole, for every
tokenizer shape the lab tests."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

MIN_GROUP = 3  # fewer prompts: the check would cost what it saves
MIN_FIXED = 8  # characters every prompt shares after the cut, before any differs


def _encode(tokenizer: Any, texts: Sequence[str]) -> list[list[int]]:
    # One tokenizer call for the lot: a fast tokenizer encodes a batch in Rust, each text
    # exactly as alone.
    return [list(ids) for ids in tokenizer(list(texts), add_special_tokens=False)["input_ids"]]


def shared_cuts(tokenizer: Any, texts: Sequence[str]) -> list[int]:
    """Where the group's prompts may be cut, best first: right after the line break before the
    line where they begin to differ, and before the blank space that break ends (GPT-2's
    pattern splits a run of line breaks differently at the end of a text than before a word;
    o200k's and tekken's join a break to the mark before it). None where the group is too
    small, the tokenizer normalizes text first, or the prompts differ too soon after the break."""
    if len(texts) < MIN_GROUP:
        return []
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is None or backend.normalizer is not None:
        return []  # a normalizer may join characters across the cut: not worth proving
    common = os.path.commonprefix(list(texts))
    after = common.rfind("\n") + 1
    if after == 0:
        return []
    before = len(common[:after].rstrip())
    return [cut for cut in (after, before) if cut > 0 and len(common) - cut >= MIN_FIXED]


def encode_group(tokenizer: Any, texts: Sequence[str]) -> list[list[int]]:
    """Every text's token ids (no special tokens added), equal to encoding each whole."""
    cuts = shared_cuts(tokenizer, texts)
    if not cuts:
        return _encode(tokenizer, texts)
    [first] = _encode(tokenizer, [texts[0]])
    for cut in cuts:
        head, rest = _encode(tokenizer, [texts[0][:cut], texts[0][cut:]])
        if first == head + rest:
            rests = _encode(tokenizer, [t[cut:] for t in texts[1:]])
            return [first, *(head + r for r in rests)]
    return [first, *_encode(tokenizer, texts[1:])]
