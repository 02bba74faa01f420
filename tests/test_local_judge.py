from __future__ import annotations

import pytest

from rubric.behavior import load_behavior_rubric, reply_prompts
from rubric.local_judge import LocalJudge
from rubric.prompts import JudgePrompt, load_template
from rubric.yes_no import YesNoReading


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
