"""The numbers after a judge prompt (rubric/judging/vocab.py number_tokens) are worked out from
the prompt's tail after its last special token, once per tail: for every tokenizer shape the lab
reads, that gives exactly what tokenizing each whole prompt with each number gives, refuses the
same prompts, and stays exact for prompts with no special token at all."""

from __future__ import annotations

from diarylab.foundation.errors import LabError
from diarylab.rubric.judging import vocab
from diarylab.rubric.judging.judge_render import render_judge_prompt
from diarylab.rubric.judging.vocab import number_tokens
from diarylab.rubric.prompts import JudgePrompt
from diarylab.testing.judge_tokenizers import tokenizer as tokenizer  # the fixture, six shapes

ENTRIES = (
    "Dear diary, today I felt alone.",
    "Nobody called. 85 days of this.\n\nI counted them:",
    "Ünïcode, emoji 🙂, tabs\tand  double  spaces, 3.5 and 1,000 — well 7",
)
PREFILLS = ("Score: ", "Score:", "Rating = ", "")


def whole(tokenizer, text: str) -> vocab.NumberTokens:
    """The reference: every number tokenized with the whole prompt."""
    return vocab._numbers_after(tokenizer, text, vocab._encode(tokenizer, text))


def outcome(fn):
    try:
        return fn()
    except LabError as error:
        return ("refused", error.message if hasattr(error, "message") else str(error))


def prompts(tokenizer) -> list[str]:
    texts = []
    for entry in ENTRIES:
        for prefill in PREFILLS:
            chat = JudgePrompt.chat(
                [
                    {"role": "system", "content": "Rate the diary entry from 0 to 100."},
                    {"role": "user", "content": entry},
                ],
                prefill=prefill,
            )
            texts.append(render_judge_prompt(tokenizer, chat).text)
        texts.append(f"Entry: {entry}\nScore: ")  # raw text: no special token
    return texts


def test_the_tail_gives_what_the_whole_prompt_gives(tokenizer):
    refused = kept = 0
    for text in prompts(tokenizer):
        fast = outcome(lambda text=text: number_tokens(tokenizer, text))
        slow = outcome(lambda text=text: whole(tokenizer, text))
        if isinstance(slow, tuple):
            assert isinstance(fast, tuple), text  # refused both ways
            refused += 1
        else:
            assert fast == slow, text
            kept += 1
    assert kept >= len(ENTRIES)  # the lab's own "Score: " prompts are read


def test_tails_are_worked_out_once_and_a_changed_ending_is_not_confused(tokenizer):
    chat = [{"role": "user", "content": "Rate it."}]
    first = render_judge_prompt(tokenizer, JudgePrompt.chat(chat, prefill="Score: ")).text
    other = render_judge_prompt(
        tokenizer, JudgePrompt.chat([{"role": "user", "content": "Longer. Rate it."}], "Score: ")
    ).text
    vocab._TAILS.pop(tokenizer, None)
    number_tokens(tokenizer, first)
    number_tokens(tokenizer, other)
    tails = vocab._TAILS.get(tokenizer, {})
    assert len(tails) == 1  # both end alike after their last special token: one tail
    differs = first + " 7"  # a prompt that ends differently gets its own numbers
    assert outcome(lambda: number_tokens(tokenizer, differs)) == outcome(
        lambda: whole(tokenizer, differs)
    )
