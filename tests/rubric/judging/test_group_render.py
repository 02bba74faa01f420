"""A group of judge prompts rendered with their shared frame rendered once
(rubric/judging/group_render.py) gives exactly what rendering each prompt alone gives, for every
tokenizer shape the lab tests (tests/rubric/test_vocab.py's six: chat templates, harmony by
template and by openai-harmony), on a reply's real rubric prompts with and without earlier
exchanges; the shortcut is really taken; and where a renderer does not write a content as it is, or
the prompts differ elsewhere, every prompt is rendered whole."""

from __future__ import annotations

from weakref import WeakKeyDictionary

import pytest

import diarylab.rubric.judging.group_render as group_render
from diarylab.rubric.behavior_rubric import load_behavior_rubric
from diarylab.rubric.judging.group_render import render_group
from diarylab.rubric.judging.judge_render import render_judge_prompt
from diarylab.rubric.prompts import JudgePrompt, load_template
from diarylab.testing.judge_tokenizers import (
    mistral_style_tokenizer,
    tokenizer,  # noqa: F401  (the fixture: six tokenizer shapes)
)

HISTORY = (
    "Earlier in this conversation:\n\n<earlier_entry>\nI stayed in again.\n</earlier_entry>\n\n"
    "<earlier_reply>\nThat sounds lonely.\n</earlier_reply>\n\n"
)
ENTRY = "Ünïcode — “quotes”, tabs\tand  double  spaces, 3.5 and 1,000; an emoji 🙂 at the end"


def rubric_prompts(history: str, reply: str) -> list[JudgePrompt]:
    template = load_template("reply_question")
    questions = [q.question for q in load_behavior_rubric().questions]
    return [
        template.prompt(history=history, entry=ENTRY, reply=reply, question=q) for q in questions
    ]


def alone(tok, prompts):
    return [render_judge_prompt(tok, p, reasoning_effort="low") for p in prompts]


def counted(monkeypatch) -> list[JudgePrompt]:
    seen: list[JudgePrompt] = []
    real = group_render.render_judge_prompt

    def render(tok, prompt, **kwargs):
        seen.append(prompt)
        return real(tok, prompt, **kwargs)

    monkeypatch.setattr(group_render, "render_judge_prompt", render)
    monkeypatch.setattr(group_render, "_CHECKED", WeakKeyDictionary())
    return seen


@pytest.mark.parametrize("history", ["", HISTORY])
def test_a_replys_rubric_prompts_render_as_each_alone(tokenizer, history, monkeypatch):  # noqa: F811
    prompts = rubric_prompts(history, "That sounds hard. Who could you call?")
    assert len(prompts) == 15
    expected = alone(tokenizer, prompts)
    seen = counted(monkeypatch)
    assert render_group(tokenizer, prompts, reasoning_effort="low") == expected
    assert seen == [prompts[0], prompts[-1]]  # the shortcut: two renders for fifteen prompts
    # Another reply's group in the same frame: its last prompt's check is known, so only its
    # first prompt is rendered whole.
    other = rubric_prompts(history, "Have you told anyone how you feel?")
    seen.clear()
    assert render_group(tokenizer, other, reasoning_effort="low") == alone(tokenizer, other)
    assert seen == [other[0]]


def test_a_template_that_changes_the_content_is_rendered_whole(monkeypatch):
    tok = mistral_style_tokenizer()
    # A template that rewrites a word in every content: the framed text would not match.
    tok.chat_template = (
        "{% for m in messages %}[{{ m['role'] }}]{{ m['content'] | replace('Yes', 'YES') }}"
        "{% endfor %}"
    )
    prompts = rubric_prompts(HISTORY, "Thank you.")
    seen = counted(monkeypatch)
    assert render_group(tok, prompts, reasoning_effort="low") == alone(tok, prompts)
    assert len(seen) == len(prompts)


def test_a_content_written_twice_is_rendered_whole(monkeypatch):
    tok = mistral_style_tokenizer()
    tok.chat_template = (
        "{% for m in messages %}[{{ m['role'] }}]{{ m['content'] }}|{{ m['content'] }}{% endfor %}"
    )
    prompts = rubric_prompts("", "Thank you.")
    seen = counted(monkeypatch)
    assert render_group(tok, prompts, reasoning_effort="low") == alone(tok, prompts)
    assert len(seen) == len(prompts)


@pytest.mark.parametrize(
    "change",
    [
        lambda p, i: JudgePrompt.chat(
            [{"role": r, "content": c + (str(i) if k == 0 else "")}
             for k, (r, c) in enumerate(p.messages)],
            prefill=p.prefill,
        ),  # the system message differs
        lambda p, i: JudgePrompt.chat(
            [{"role": r, "content": c} for r, c in p.messages], prefill=p.prefill + str(i % 2)
        ),  # the prefill differs
    ],
)  # fmt: skip
def test_prompts_that_differ_elsewhere_are_rendered_whole(tokenizer, change, monkeypatch):  # noqa: F811
    prompts = [change(p, i) for i, p in enumerate(rubric_prompts("", "Thank you."))]
    seen = counted(monkeypatch)
    assert render_group(tokenizer, prompts, reasoning_effort="low") == alone(tokenizer, prompts)
    assert len(seen) == len(prompts)


def test_small_groups_and_raw_prompts_are_rendered_whole(monkeypatch):
    tok = mistral_style_tokenizer()
    two = rubric_prompts("", "Thank you.")[:2]
    raw = [JudgePrompt.raw(f"Question {i}: yes or no?") for i in range(4)]
    seen = counted(monkeypatch)
    assert render_group(tok, two, reasoning_effort="low") == alone(tok, two)
    assert render_group(tok, raw, reasoning_effort="low") == alone(tok, raw)
    assert len(seen) == 6
