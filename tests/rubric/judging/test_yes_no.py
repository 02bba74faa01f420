"""Yes/no readings: P(yes) renormalised over every single-token yes and no variant."""

from __future__ import annotations

import json
import math

import pytest

from diarylab.foundation.errors import LabError
from diarylab.rubric.judging.local_judge import LocalJudge
from diarylab.rubric.judging.vocab import vocab_facts
from diarylab.rubric.judging.yes_no import (
    YesNoReading,
    answer_of,
    yes_no_reading,
    yes_no_summary,
)
from diarylab.rubric.prompts import JudgePrompt


def test_variants_in_the_shipped_vocabulary(shipped_tokenizer):
    facts = vocab_facts(shipped_tokenizer)
    yes = {facts.raw_tokens[i] for i in facts.yes_ids}
    no = {facts.raw_tokens[i] for i in facts.no_ids}
    assert {"Yes", "yes", "ĠYes", "Ġyes"} <= yes
    assert {"No", "no", "NO", "ĠNo", "Ġno"} <= no
    assert not yes & no


def test_answer_of():
    assert answer_of("▁Yes") == "yes" and answer_of(" NO") == "no" and answer_of("Ġyes") == "yes"
    assert answer_of("Yesterday") is None and answer_of("not") is None and answer_of("Ġ") is None


@pytest.mark.parametrize(
    "text",
    ["Is the sky blue? Answer:", "Is the sky blue? Answer: "],
    ids=["no-space", "trailing-space"],
)
def test_local_yes_no_equals_a_full_pass(tiny_model, text):
    reading = LocalJudge(tiny_model).read_yes_no(JudgePrompt.raw(text), floor=0.0)
    facts = vocab_facts(tiny_model.tokenizer)
    row = tiny_model.full_pass_logprobs(tiny_model.encode(text))[-1].double()
    p_yes = float(row[list(facts.yes_ids)].exp().sum())
    p_no = float(row[list(facts.no_ids)].exp().sum())
    assert reading.coverage == pytest.approx(p_yes + p_no, rel=1e-4)
    assert reading.p_yes == pytest.approx(p_yes / (p_yes + p_no), rel=1e-4)


def test_floor_makes_a_reading_unreadable_never_a_guess():
    low = yes_no_reading({"Yes": math.log(0.1)}, {"No": math.log(0.2)}, floor=0.5)
    assert not low.readable and low.p_yes is None and low.coverage == pytest.approx(0.3)
    high = yes_no_reading({"Yes": math.log(0.6), "Ġyes": math.log(0.1)}, {"No": math.log(0.1)})
    assert high.readable and high.p_yes == pytest.approx(0.7 / 0.8)


def test_record_round_trip(tiny_model):
    reading = LocalJudge(tiny_model).read_yes_no(JudgePrompt.raw("Answer:"), floor=0.0)
    again = YesNoReading.from_record(json.loads(json.dumps(reading.to_record())), floor=0.0)
    assert again.p_yes == pytest.approx(reading.p_yes) and again.coverage == reading.coverage


@pytest.mark.parametrize("floor", [0.0, 0.3, 0.5, 0.9])
def test_a_judgment_rows_summary_is_the_readings_own(tiny_model, floor):
    """What a judgment row keeps (yes_no_summary) is exactly what the full reading says."""
    model_made = LocalJudge(tiny_model).read_yes_no(JudgePrompt.raw("Answer:"), floor=0.0)
    hand_made = yes_no_reading({"Yes": math.log(0.3), "Ġyes": math.log(0.1)}, {"No": -0.9})
    for reading in (model_made, hand_made):
        stored = json.loads(json.dumps(reading.to_record()))
        full = YesNoReading.from_record(stored, floor=floor)
        summary = yes_no_summary(stored, floor=floor)
        assert (summary.value, summary.coverage, summary.readable) == (
            full.p_yes,
            full.coverage,
            full.readable,
        )
    with pytest.raises(LabError, match="not a yes/no record"):
        yes_no_summary({"kind": "number", "nodes": []})
