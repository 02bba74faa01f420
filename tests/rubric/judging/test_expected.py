"""The expected-number algorithm against brute force: the trie/KV-cache reader must give the same
101 probabilities as scoring every number with its own full forward pass."""

from __future__ import annotations

import json
import math

import pytest

from diarylab.foundation.errors import LabError
from diarylab.model_access.local import LocalModel
from diarylab.rubric.judging.expected import (
    NodeReading,
    continues_number,
    distribution,
    path_masses,
)
from diarylab.rubric.judging.local_judge import LocalJudge
from diarylab.rubric.judging.number_reading import NumberReading, number_reading, number_summary
from diarylab.rubric.prompts import JudgePrompt
from diarylab.testing.judge_helpers import (
    bias_logits,
    brute_force_distribution,
    digit_start_ids,
    single_token_model,
)
from diarylab.testing.tiny_models import build_tiny_llama

PROMPTS = [
    "Rate today's entry from 0 to 100.\nScore: ",
    "Rate today's entry from 0 to 100.\nScore:",
]


def assert_same(reader: list[float] | tuple[float, ...], brute: list[float]) -> None:
    assert len(reader) == len(brute) == 101
    for n, (a, b) in enumerate(zip(reader, brute, strict=True)):
        assert abs(a - b) <= 1e-5, (n, a, b)
        # The tiny random model spreads its mass thinly, so check relative agreement too.
        assert abs(a - b) <= 1e-3 * max(b, 1e-12), (n, a, b)


@pytest.mark.parametrize("text", PROMPTS, ids=["trailing-space", "no-space"])
def test_digit_tokenizer_matches_brute_force(tiny_model, text):
    reading = LocalJudge(tiny_model).read_number(JudgePrompt.raw(text), floor=0.0)
    assert_same(reading.distribution, brute_force_distribution(tiny_model, text))
    # One query per trie node (root, 0..9, 10..99, 100), and one after each likely bare mark.
    assert reading.record["queried_nodes"] >= 102


@pytest.fixture(scope="module")
def judge_like_model(shipped_tokenizer):
    """A tiny model with digits and number-enders pushed up, so most mass sits on numbers (as
    with a real judge) and the comparison is not between two near-zero vectors."""
    model = LocalModel(build_tiny_llama(shipped_tokenizer, seed=3), shipped_tokenizer, spec="b")
    enders = shipped_tokenizer.convert_tokens_to_ids(["Ċ", ".", "<|im_end|>", ","])
    bias_logits(
        model, {i: 9.0 for i in digit_start_ids(shipped_tokenizer)} | {i: 8.0 for i in enders}
    )
    return model


@pytest.mark.parametrize("text", PROMPTS, ids=["trailing-space", "no-space"])
def test_judge_like_model_matches_brute_force(judge_like_model, text):
    reading = LocalJudge(judge_like_model).read_number(JudgePrompt.raw(text), floor=0.0)
    brute = brute_force_distribution(judge_like_model, text)
    assert reading.coverage > 0.05
    for a, b in zip(reading.distribution, brute, strict=True):
        assert abs(a - b) <= 1e-5
    assert reading.coverage == pytest.approx(sum(brute), abs=1e-5)


@pytest.mark.parametrize("text", ["Rate the diary entry .\nScore: ", "Score:"])
def test_single_token_number_tokenizer_matches_brute_force(text):
    model = single_token_model()
    for n in (0, 7, 85, 100):
        assert len(model.encode(text + str(n))) == len(model.encode(text)) + 1
    reading = LocalJudge(model).read_number(JudgePrompt.raw(text), floor=0.0)
    assert_same(reading.distribution, brute_force_distribution(model, text))
    assert reading.record["queried_nodes"] >= 102  # root + 101 one-token numbers, + marks


def test_number_merging_with_the_prompt_is_a_clear_error():
    model = single_token_model()
    with pytest.raises(LabError, match="not tokenized separately"):
        LocalJudge(model).read_number(JudgePrompt.raw("Score: 1"))


def test_mean_mode_coverage_and_the_floor():
    nodes = [
        NodeReading("", {"5": math.log(0.3), "1": math.log(0.1)}),
        NodeReading("5", {}, end_logprob=0.0),
        NodeReading("1", {"0": math.log(0.5)}, end_logprob=math.log(0.5)),
        NodeReading("10", {"0": math.log(0.2)}, end_logprob=math.log(0.8)),
        NodeReading("100", {}, end_logprob=0.0),
    ]
    readable = number_reading(nodes, floor=0.2)
    dist = readable.distribution
    assert dist[5] == pytest.approx(0.3) and dist[1] == pytest.approx(0.05)
    assert dist[10] == pytest.approx(0.04) and dist[100] == pytest.approx(0.01)
    assert readable.coverage == pytest.approx(0.4)
    assert readable.mean == pytest.approx((5 * 0.3 + 0.05 + 10 * 0.04 + 100 * 0.01) / 0.4)
    assert readable.mode == 5 and readable.readable
    unreadable = number_reading(nodes, floor=0.5)
    assert not unreadable.readable and unreadable.mean is None and unreadable.mode is None
    assert unreadable.coverage == pytest.approx(0.4)  # still reported


def test_record_round_trip_recomputes_without_the_model(tiny_model):
    reading = LocalJudge(tiny_model).read_number(JudgePrompt.raw(PROMPTS[0]), floor=0.0)
    stored = json.loads(json.dumps(reading.to_record()))
    again = NumberReading.from_record(stored, floor=0.0)
    assert again.distribution == pytest.approx(reading.distribution, abs=1e-15)
    assert again.mean == pytest.approx(reading.mean)
    # The floor is applied when reading the record, not stored in it.
    assert not NumberReading.from_record(stored, floor=0.5).readable


@pytest.mark.parametrize("floor", [0.0, 0.2, 0.4, 0.5, 0.95])
def test_a_judgment_rows_summary_is_the_readings_own(tiny_model, floor):
    """What a judgment row keeps (number_summary) is exactly what the full reading says, for a
    model's record (template attached) and for a partial hand-made one, readable or not."""
    model_made = LocalJudge(tiny_model).read_number(JudgePrompt.raw(PROMPTS[0]), floor=0.0)
    hand_made = number_reading(
        [
            NodeReading("", {"5": math.log(0.3), "1": math.log(0.1)}),
            NodeReading("1", {"0": math.log(0.5)}, end_logprob=math.log(0.5)),
        ]
    )
    for reading in (model_made, hand_made):
        stored = json.loads(json.dumps(reading.to_record()))
        full = NumberReading.from_record(stored, floor=floor)
        summary = number_summary(stored, floor=floor)
        assert (summary.value, summary.coverage, summary.readable) == (
            full.mean,
            full.coverage,
            full.readable,
        )
    with pytest.raises(LabError, match="not a number record"):
        number_summary({"kind": "yes_no", "yes": {}, "no": {}})


def test_continuation_rule():
    assert continues_number("5") and continues_number("05") and continues_number("5th")
    assert not any(continues_number(t) for t in ["", " 5", ".", "\n", "/", "<|im_end|>", "x"])


def test_path_masses_sum_every_way_of_writing_a_number():
    # A served judge may see "85" as one piece and as "8" then "5".
    nodes = {
        "": NodeReading("", {"85": math.log(0.2), "8": math.log(0.4)}),
        "8": NodeReading("8", {"5": math.log(0.5)}, end_logprob=math.log(0.5)),
        "85": NodeReading("85", {}, end_logprob=0.0),
    }
    assert path_masses(nodes)["85"] == pytest.approx(0.4)
    assert distribution(nodes)[85] == pytest.approx(0.4)
    assert distribution(nodes)[8] == pytest.approx(0.2)


@pytest.mark.slow
def test_embedded_default_matches_brute_force(smollm2):
    # The no-space variant on this tokenizer is covered by the tiny-model tests above.
    prompt = JudgePrompt.chat(
        [
            {
                "role": "user",
                "content": "Rate how lonely this diary entry sounds, 0 to 100: "
                "'Nobody called again today.'",
            }
        ],
        prefill="Score: ",
    )
    judge = LocalJudge(smollm2)
    reading = judge.read_number(prompt, floor=0.0)
    assert_same(reading.distribution, brute_force_distribution(smollm2, judge.prompt_text(prompt)))
