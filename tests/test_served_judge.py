"""The served judge end to end: real HTTP, litellm and parsing against a loopback stand-in whose
log-probabilities are computed by a real (tiny) model, compared with reading that model locally."""

from __future__ import annotations

import pytest

from foundation.errors import LabError
from model_access.local import LocalModel
from model_access.served import ServedClient
from model_access.settings import EndpointSettings
from rubric.local_judge import LocalJudge
from rubric.prompts import JudgePrompt
from rubric.served_judge import ServedJudge
from tests.conftest import build_tiny_llama
from tests.fake_judge_server import judge_handler
from tests.fake_openai import serve
from tests.judge_helpers import bias_logits, digit_start_ids

NUMBER = JudgePrompt.chat(
    [{"role": "user", "content": "Rate the entry, 0 to 100."}], prefill="Score: "
)
YES_NO = JudgePrompt.chat([{"role": "user", "content": "Is the writer lonely?"}], prefill="Answer:")


@pytest.fixture(scope="module")
def judge_model(shipped_tokenizer):
    """A tiny model nudged toward digits and number-enders, like a judge answering a score."""
    model = LocalModel(build_tiny_llama(shipped_tokenizer, seed=5), shipped_tokenizer, spec="j")
    enders = shipped_tokenizer.convert_tokens_to_ids(["Ċ", ".", "<|im_end|>"])
    bias_logits(
        model, {i: 12.0 for i in digit_start_ids(shipped_tokenizer)} | {i: 10.0 for i in enders}
    )
    return model


@pytest.fixture(scope="module")
def local_reading(judge_model):
    return LocalJudge(judge_model).read_number(NUMBER, floor=0.0)


def served(url: str, **kw) -> ServedJudge:
    settings = EndpointSettings(base_url=url, max_retries=0, concurrency=4)
    return ServedJudge(ServedClient("openai/fake-judge", settings, sleep=lambda s: None), **kw)


def test_explicit_token_ids_give_the_local_reading(judge_model, local_reading):
    with serve(judge_handler(judge_model, mode="vllm")) as server:
        reading = served(
            server.base_url, tokenizer=judge_model.tokenizer, expand_floor=0.0
        ).read_number(NUMBER, floor=0.0)
    assert reading.exact and reading.record["unqueried_mass"] == 0
    # Float32 log-probabilities cross the wire and P(end) is 1 − Σ P(digit tokens): ~1e-5.
    for a, b in zip(reading.distribution, local_reading.distribution, strict=True):
        assert abs(a - b) < 5e-5
    assert reading.mean == pytest.approx(local_reading.mean, abs=0.05)
    first = server.requests[0]
    assert first["temperature"] == 0 and not first.get("stream")
    assert first["logprobs"] is True and 1 <= first["top_logprobs"] <= 20
    assert first["continue_final_message"] is True and first["add_generation_prompt"] is False
    assert first["messages"][-1] == {"role": "assistant", "content": "Score: "}
    assert set(digit_start_ids(judge_model.tokenizer)) <= set(first["logprob_token_ids"])
    # Multi-digit numbers: later requests prefill the digits written so far.
    prefills = {r["messages"][-1]["content"] for r in server.requests}
    assert "Score: 8" in prefills or "Score: 5" in prefills


def test_top_k_only_never_overstates_and_reports_lower_coverage(judge_model, local_reading):
    with serve(judge_handler(judge_model, mode="openai")) as server:
        reading = served(
            server.base_url, tokenizer=judge_model.tokenizer, expand_floor=1e-3
        ).read_number(NUMBER, floor=0.0)
    assert not reading.exact
    for a, b in zip(reading.distribution, local_reading.distribution, strict=True):
        assert a <= b + 1e-5
    assert 0 < reading.coverage <= local_reading.coverage + 1e-5


def test_without_prefill_one_request_and_honest_coverage(judge_model, local_reading):
    with serve(judge_handler(judge_model, mode="openai")) as server:
        reading = served(server.base_url, prefill=False).read_number(NUMBER, floor=0.0)
    assert len(server.requests) == 1
    assert "continue_final_message" not in server.requests[0]
    assert reading.coverage <= local_reading.coverage + 1e-5
    assert reading.record["unqueried_mass"] >= 0


def test_a_response_without_log_probabilities_is_a_clear_error(judge_model):
    with serve(judge_handler(judge_model, mode="no_logprobs")) as server:
        with pytest.raises(LabError, match="no log-probabilities"):
            served(server.base_url).read_number(NUMBER)
        with pytest.raises(LabError, match="no log-probabilities"):
            served(server.base_url).read_yes_no(YES_NO)


def test_served_yes_no_with_token_ids_equals_local(judge_model):
    local = LocalJudge(judge_model).read_yes_no(YES_NO, floor=0.0)
    with serve(judge_handler(judge_model, mode="vllm")) as server:
        reading = served(server.base_url, tokenizer=judge_model.tokenizer).read_yes_no(
            YES_NO, floor=0.0
        )
    assert reading.exact
    assert reading.coverage == pytest.approx(local.coverage, rel=1e-4)
    assert reading.p_yes == pytest.approx(local.p_yes, rel=1e-4)
    assert len(server.requests) == 1 and server.requests[0]["max_tokens"] == 1


def test_raw_text_prompts_need_a_local_judge():
    with pytest.raises(LabError, match="reads a chat"):
        served("http://127.0.0.1:9/v1").read_number(JudgePrompt.raw("Score: "))


def test_record_recomputes_the_served_reading(judge_model):
    from rubric.expected import NumberReading

    with serve(judge_handler(judge_model, mode="openai")) as server:
        reading = served(server.base_url).read_number(NUMBER, floor=0.0)
    again = NumberReading.from_record(reading.to_record(), floor=0.0)
    assert again.distribution == reading.distribution
    assert reading.record["calls"] == len(server.requests)
