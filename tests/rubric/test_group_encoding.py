"""A group of judge prompts encoded with their shared beginning encoded once
(rubric/judging/group_encoding.py) gives exactly what encoding each prompt whole gives, for every
tokenizer shape the lab tests (tests/rubric/test_vocab.py's six), on a reply's real rubric prompts
and on groups made to trip the cut; and the shortcut is really taken where the tokenizer allows."""

from __future__ import annotations

import pytest

from diarylab.rubric.behavior_rubric import load_behavior_rubric
from diarylab.rubric.judging.group_encoding import encode_group, shared_cuts
from diarylab.rubric.judging.judge_render import render_judge_prompt
from diarylab.rubric.prompts import JudgePrompt, load_template
from diarylab.testing.judge_tokenizers import tokenizer  # noqa: F401  (the fixture: six tokenizer shapes)

HISTORY = (
    "I stayed in again today. Nobody called, and I did not call anyone either.\n\n"
    "Ünïcode — “quotes”, tabs\tand  double  spaces, 3.5 and 1,000; an emoji 🙂 at the end\n"
)


def whole(tok, texts):
    return [list(tok(t, add_special_tokens=False)["input_ids"]) for t in texts]


def rubric_prompts(entry: str, reply: str) -> list[str]:
    template = load_template("reply_question")
    questions = [q.question for q in load_behavior_rubric().questions]
    return [template.prompt(history="", entry=entry, reply=reply, question=q) for q in questions]  # type: ignore[misc]


def rendered(tok, prompts) -> list[str]:
    return [render_judge_prompt(tok, p).text for p in prompts]


def test_a_replys_rubric_prompts_encode_as_each_whole(tokenizer):  # noqa: F811
    texts = rendered(tokenizer, rubric_prompts(HISTORY, "That sounds hard. Who could you call?"))
    assert len(texts) == 15
    assert encode_group(tokenizer, texts) == whole(tokenizer, texts)


def test_the_shortcut_is_taken_where_the_tokenizer_allows(tokenizer):  # noqa: F811
    texts = rendered(tokenizer, rubric_prompts(HISTORY, "Thank you for sharing."))
    cuts = shared_cuts(tokenizer, texts)
    assert len(cuts) == 2  # none of the six normalizes first
    assert all(t[cuts[0] :].startswith("Question about the reply: ") for t in texts)
    assert all(t[cuts[1] :].startswith("\n\nQuestion about the reply: ") for t in texts)


@pytest.mark.parametrize(
    "tails",
    [
        ["Question: \u0301accent first", "Question: \u0301b", "Question: \u0301c"],  # combining
        ["Question:   lead", "Question:   lead", "Question:   other"],  # spaces at the edge
        ["Question:7 a", "Question:8 b", "Question:91 c"],  # digits after a colon
        ["\n\nQuestion: a", "\n\nQuestion: b", "\n\nQuestion: c"],  # blank lines at the cut
        ["Question: a", "Questions: b", "Question c"],  # they differ too soon: encoded whole
    ],
)
def test_groups_made_to_trip_the_cut_still_encode_as_each_whole(tokenizer, tails):  # noqa: F811
    texts = [HISTORY + "Reply: fine.\n" + tail for tail in tails]
    assert encode_group(tokenizer, texts) == whole(tokenizer, texts)


def test_small_groups_and_chat_prompts_are_left_whole(tokenizer):  # noqa: F811
    two = [HISTORY + "Question: a", HISTORY + "Question: b"]
    assert shared_cuts(tokenizer, two) == []
    assert encode_group(tokenizer, two) == whole(tokenizer, two)
    chats = [JudgePrompt.chat([{"role": "user", "content": f"{HISTORY}Q{i}"}]) for i in range(4)]
    texts = rendered(tokenizer, chats)
    assert encode_group(tokenizer, texts) == whole(tokenizer, texts)


def test_where_the_check_holds_the_beginning_is_encoded_once_per_group_and_checked_once(
    tokenizer,  # noqa: F811
    monkeypatch,
    request,
):
    from weakref import WeakKeyDictionary

    from diarylab.rubric.judging import group_encoding

    monkeypatch.setattr(group_encoding, "_CHECKED", WeakKeyDictionary())
    encoded: list[int] = []
    real = group_encoding._encode
    monkeypatch.setattr(
        group_encoding, "_encode", lambda t, xs: encoded.append(sum(map(len, xs))) or real(t, xs)
    )
    holds = request.node.callspec.params["tokenizer"] != "mistral"
    for n, reply in enumerate(["Thank you for sharing.", "Who could you call tonight?"]):
        texts = rendered(tokenizer, rubric_prompts(HISTORY * (8 + n), reply))
        encoded.clear()
        assert encode_group(tokenizer, texts) == whole(tokenizer, texts)
        total = sum(map(len, texts))
        if not holds:
            # SentencePiece-style: a text alone starts with a word mark the rest does not have
            # after the beginning, so both cuts fail (checked once) and every prompt is encoded
            # whole
            assert len(encoded) == (4 if n == 0 else 1) and encoded[-1] == total
        elif n == 0:  # the beginning and each prompt's rest, and the first prompt whole: checked
            # (GPT-2's pattern fails the first cut and takes the second)
            assert len(encoded) in (2, 3) and sum(encoded) < total / 2
        else:  # a group with the same text at the cut: its check is known
            assert len(encoded) == 1 and sum(encoded) < total / 4
