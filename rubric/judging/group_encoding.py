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
prompt of the group — and for every group with the same text around the cut, so each cut is
checked once per tokenizer and text around it (a study's groups share their template's text
there). Where the check fails (a SentencePiece tokenizer that marks the start of a text, a
tokenizer with a normalizer), every prompt is encoded whole, as before.
tests/rubric/test_group_encoding.py holds the result equal to encoding each prompt whole, for every
tokenizer shape the lab tests."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any
from weakref import WeakKeyDictionary

from diarylab.rubric.judging.line_encoding import MIN_FIXED, encode_texts, text_around

MIN_GROUP = 3  # fewer prompts: the check would cost what it saves


def _encode(tokenizer: Any, texts: Sequence[str]) -> list[list[int]]:
    # A line at a time, each line's ids remembered (line_encoding.py): each text exactly as
    # encoded whole.
    return encode_texts(tokenizer, texts)


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
    checked = _CHECKED.setdefault(tokenizer, {})
    first: list[int] | None = None
    for cut in cuts:
        # What decides a cut lies at it (see above), so a cut checked on one group holds for
        # every group with the same text around it: a study's groups share their template's
        # text there ("</reply>\n\nQuestion about the reply: "), and checking each group again
        # cost a whole prompt's encoding per group.
        around = (cuts.index(cut), text_around(texts[0], cut)[0])
        holds = checked.get(around)
        if holds is False:
            continue
        head, *rests = _encode(tokenizer, [texts[0][:cut], *(t[cut:] for t in texts)])
        if holds is None:
            if first is None:
                [first] = _encode(tokenizer, [texts[0]])
            holds = checked[around] = first == head + rests[0]
        if holds:
            return [head + r for r in rests]
    return _encode(tokenizer, texts)


# tokenizer → (which cut, the text around it) → whether cutting there gives the whole encoding
_CHECKED: WeakKeyDictionary[Any, dict[tuple[int, str], bool]] = WeakKeyDictionary()
