from __future__ import annotations

import pytest
import torch

from diarylab.rubric.behavior import reply_prompts
from diarylab.rubric.behavior_rubric import load_behavior_rubric
from diarylab.rubric.judging.local_judge import LocalJudge
from diarylab.rubric.judging.yes_no import YesNoReading
from diarylab.rubric.prompts import JudgePrompt, load_template


def test_batched_yes_no_equals_one_call_each(tiny_model):
    judge = LocalJudge(tiny_model)
    rubric = load_behavior_rubric()
    person, questions = reply_prompts(
        "I ate alone again. Nobody texted.",
        "That sounds lonely. What would help?",
        [
            {"role": "user", "content": "Monday was fine."},
            {"role": "assistant", "content": "Good."},
        ],
        rubric,
        load_template("person_question"),
        load_template("reply_question"),
    )
    prompts = list(questions.values())
    batched = judge.yes_no_records(prompts)
    for prompt, record in zip(prompts, batched, strict=True):
        single = judge.yes_no_record(prompt)
        a, b = YesNoReading.from_record(record), YesNoReading.from_record(single)
        assert a.p_yes == pytest.approx(b.p_yes, abs=1e-5)
        assert a.coverage == pytest.approx(b.coverage, abs=1e-5)
        assert record["prompt_tokens"] == single["prompt_tokens"]


def test_batched_yes_no_with_nothing_in_common(tiny_model):
    judge = LocalJudge(tiny_model)
    prompts = [JudgePrompt.raw("Is the sky green? Answer:"), JudgePrompt.raw("Hello")]
    batched = judge.yes_no_records(prompts)
    singles = [judge.yes_no_record(p) for p in prompts]
    for rec, single in zip(batched, singles, strict=True):
        assert YesNoReading.from_record(rec).p_yes == pytest.approx(
            YesNoReading.from_record(single).p_yes, abs=1e-5
        )


def _questions(entry: str, reply: str) -> list[JudgePrompt]:
    person, questions = reply_prompts(
        entry,
        reply,
        [],
        load_behavior_rubric(),
        load_template("person_question"),
        load_template("reply_question"),
    )
    return list(questions.values())


def test_a_reading_does_not_depend_on_its_batch(tiny_model):
    """A resumed run reads a prompt with other batch-mates than an unbroken run did; the
    stored reading must be the same to the last bit, or the two stores differ."""
    judge = LocalJudge(tiny_model, block=16)
    mine = _questions("I ate alone again. Nobody texted.", "That sounds lonely.")
    other = _questions("A long day at the depot, then the night bus home.", "Thanks.")
    together = judge.yes_no_records(mine)
    assert [judge.yes_no_records([p])[0] for p in mine] == together
    assert judge.yes_no_records(mine[:5]) + judge.yes_no_records(mine[5:]) == together
    assert judge.yes_no_records(other[:3] + mine + other[3:])[3 : 3 + len(mine)] == together
    assert judge.yes_no_records(list(reversed(mine))) == list(reversed(together))


@pytest.mark.parametrize("block", [1, 7, 64])
def test_block_readings_match_a_plain_forward_pass(tiny_model, block):
    prompts = [
        tiny_model.encode(text)
        for text in (
            "Dear diary, the bus was late again and I",
            "Dear diary, the bus was late again and we",
            "Dear diary, the rain",
            "Nothing in common here",
        )
    ]
    rows = tiny_model.last_logprobs(prompts, block=block)
    for ids, row in zip(prompts, rows, strict=True):
        assert torch.allclose(row, tiny_model.full_pass_logprobs(ids)[-1], atol=1e-4)
