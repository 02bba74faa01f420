"""Rendering a group of judge prompts that differ only in their last message — a reply's fifteen
rubric questions each carry the whole conversation in one user message, and differ only in the
question at its end — without rendering the conversation once per prompt. At paper size that
rendering was the largest part of a served judge's client time (a chat template or harmony's
renderer over the whole conversation, 0.5–1.1 ms a prompt; docs/scaling.md).

The first prompt is rendered whole; where its last message's content appears in the text exactly
once, the text around it is the frame every prompt of the group shares, and each prompt's text is
the frame around its own content. That holds where the renderer writes a message's content as it
is, whatever the content — as harmony's renderer and the chat templates of the lab's judges do.
It is checked where a renderer could differ: the first prompt's content must appear in its
rendering as it is (every group), and the last prompt, rendered whole, must equal its framed text
(once per frame and last question: the questions, where a group's prompts differ, are the same
in every group); otherwise every prompt is rendered whole, as before. The prompts' contents share
their beginning and end (the conversation, and the line after the question), so a template that
trims or marks a content's edges frames each of them alike.
tests/rubric/judging/test_group_render.py holds the result equal to rendering each prompt whole."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any
from weakref import WeakKeyDictionary

from diarylab.rubric.judging.judge_render import RenderedPrompt, render_judge_prompt
from diarylab.rubric.prompts import JudgePrompt

MIN_GROUP = 3  # fewer prompts: the check renders as many as it saves


def render_group(
    tokenizer: Any, prompts: Sequence[JudgePrompt], *, reasoning_effort: str
) -> list[RenderedPrompt]:
    """Every prompt rendered, each equal to render_judge_prompt's rendering of it alone."""

    def whole(prompt: JudgePrompt) -> RenderedPrompt:
        return render_judge_prompt(tokenizer, prompt, reasoning_effort=reasoning_effort)

    if not _framed_alike(prompts):
        return [whole(p) for p in prompts]
    first = whole(prompts[0])
    content = prompts[0].messages[-1][1]
    if not content or first.text.count(content) != 1:
        return [first, *(whole(p) for p in prompts[1:])]
    head, tail = first.text.split(content)
    framed = [
        RenderedPrompt(head + p.messages[-1][1] + tail, first.form, first.reasoning_effort)
        for p in prompts
    ]
    # The last prompt is checked once per frame and ending: what differs between the prompts
    # of a group is their contents' ending (a rubric question), the same in every group, and
    # each group's own beginning is checked above, in its first prompt's rendering.
    known = _CHECKED.setdefault(tokenizer, {})
    key = (head, tail, reasoning_effort, _ending(content, prompts[-1].messages[-1][1]))
    holds = known.get(key)
    if holds is None:
        last = whole(prompts[-1])
        holds = known[key] = framed[-1] == last
        if not holds:
            return [first, *(whole(p) for p in prompts[1:-1]), last]
    return framed if holds else [first, *(whole(p) for p in prompts[1:])]


# tokenizer → (frame, effort, the last prompt's own ending) → whether framing gave its rendering
_CHECKED: WeakKeyDictionary[Any, dict[tuple[str, str, str, str], bool]] = WeakKeyDictionary()


def _ending(first: str, last: str) -> str:
    """What the last content has after what it shares with the first."""
    return last[len(os.path.commonprefix([first, last])) :]


def _framed_alike(prompts: Sequence[JudgePrompt]) -> bool:
    """Chat prompts alike in everything but their last message's content."""
    if len(prompts) < MIN_GROUP:
        return False
    first = prompts[0]
    if first.text is not None or not first.messages:
        return False
    role = first.messages[-1][0]
    return all(
        p.text is None
        and len(p.messages) == len(first.messages)
        and p.messages[:-1] == first.messages[:-1]
        and p.messages[-1][0] == role
        and p.prefill == first.prefill
        for p in prompts[1:]
    )
