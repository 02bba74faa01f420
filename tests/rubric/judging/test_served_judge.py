"""The served judge end to end on the shipped tokenizer: real HTTP, litellm and parsing against
the vLLM-shaped stand-in (testing/fake_judge_server.py), whose log-probabilities are computed by a
real tiny model, compared with reading that model locally."""

from __future__ import annotations

import pytest

from diarylab.foundation.errors import LabError
from diarylab.model_access.local import LocalModel
from diarylab.model_access.served import ServedClient
from diarylab.model_access.settings import EndpointSettings
from diarylab.rubric.judging.local_judge import LocalJudge
from diarylab.rubric.judging.number_reading import NumberReading
from diarylab.rubric.judging.served_chat import ChatSettings
from diarylab.rubric.judging.served_exact import ExactSettings
from diarylab.rubric.judging.served_judge import ServedJudge
from diarylab.rubric.prompts import JudgePrompt
from diarylab.testing.fake_judge_server import judge_handler
from diarylab.testing.fake_openai import serve
from diarylab.testing.judge_helpers import bias_logits, digit_start_ids
from diarylab.testing.tiny_models import build_tiny_llama

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
    client = ServedClient("hosted_vllm/fake-judge", settings, sleep=lambda s: None)
    return ServedJudge(client, **kw)


def assert_same(a: NumberReading, b: NumberReading) -> None:
    for x, y in zip(a.distribution, b.distribution, strict=True):
        assert abs(x - y) <= 1e-5
    assert a.coverage == pytest.approx(b.coverage, abs=1e-5)


def test_exact_reading_by_prompt_tokens_equals_the_local_reading(judge_model, local_reading):
    with serve(judge_handler(judge_model)) as server:
        reading = served(server.base_url, tokenizer=judge_model.tokenizer).read_number(
            NUMBER, floor=0.0
        )
    assert_same(reading, local_reading)
    record = reading.record
    assert reading.exact and record["mode"] == "exact" and record["skipped_mass"] == 0
    assert record["http_requests"] == len(server.requests) and not record["missing_ids"]
    assert record["requests"] == sum(
        len(b["prompt"]) if isinstance(b["prompt"][0], list) else 1 for b in server.requests
    )
    assert record["prompt_tail"].endswith("assistant\nScore: ")
    # Every request is a /v1/completions call by token ids, one token, at most 128 ids.
    assert set(server.paths) == {"/v1/completions"}
    for body in server.requests:
        assert isinstance(body["prompt"], list) and body["max_tokens"] == 1
        assert 0 < len(body["logprob_token_ids"]) <= 128
        assert body["return_token_ids"] is True and body["return_tokens_as_token_ids"] is True
    # a list of prompts (prompts_per_request) or one
    prompts = {
        tuple(p)
        for b in server.requests
        for p in (b["prompt"] if isinstance(b["prompt"][0], list) else [b["prompt"]])
    }
    assert len(prompts) >= 102  # every trie node, each its own prompt on the shared prefix


def test_exact_yes_no_equals_local(judge_model):
    local = LocalJudge(judge_model).read_yes_no(YES_NO, floor=0.0)
    with serve(judge_handler(judge_model)) as server:
        reading = served(server.base_url, tokenizer=judge_model.tokenizer).read_yes_no(
            YES_NO, floor=0.0
        )
    assert reading.exact and reading.record["mode"] == "exact"
    assert reading.coverage == pytest.approx(local.coverage, abs=1e-6)
    assert reading.p_yes == pytest.approx(local.p_yes, abs=1e-6)


def test_a_server_that_ignores_the_ids_gives_a_reading_recorded_as_not_exact(judge_model):
    # mode "openai": logprob_token_ids are dropped, as by a server without that feature; its
    # top-k comes back instead and exactness is judged from what came back.
    with serve(judge_handler(judge_model, mode="openai")) as server:
        reading = served(
            server.base_url, tokenizer=judge_model.tokenizer, exact=ExactSettings(top_logprobs=5)
        ).read_number(NUMBER, floor=0.0)
    assert not reading.exact and reading.record["missing_ids"]


def test_top_k_chat_reading_is_never_exact_and_never_overstates(judge_model, local_reading):
    with serve(judge_handler(judge_model, renderer="trim")) as server:
        reading = served(server.base_url, mode="top-k").read_number(NUMBER, floor=0.0)
    assert not reading.exact and reading.record["mode"] == "top-k"
    assert reading.coverage > 0
    first = server.requests[0]
    assert server.paths[0] == "/v1/chat/completions"
    # The prefill goes without its trailing space, and token-id printing is refused explicitly.
    assert first["messages"][-1] == {"role": "assistant", "content": "Score:"}
    assert first["continue_final_message"] is True and first["add_generation_prompt"] is False
    assert first["return_tokens_as_token_ids"] is False
    assert 1 <= first["top_logprobs"] <= 20


def test_top_k_reading_survives_a_server_printing_token_ids_by_default(judge_model):
    with serve(judge_handler(judge_model, token_ids_default=True)) as server:
        reading = served(server.base_url, mode="top-k").read_number(NUMBER, floor=0.0)
    assert reading.coverage > 0 and reading.record["first_tokens"]
    assert not any(t.startswith("token_id:") for t in reading.record["first_tokens"])


def test_without_prefill_one_request(judge_model):
    with serve(judge_handler(judge_model)) as server:
        served(server.base_url, chat=ChatSettings(prefill=False)).read_number(NUMBER, floor=0.0)
    assert len(server.requests) == 1
    assert "continue_final_message" not in server.requests[0]


def test_a_response_without_log_probabilities_is_a_clear_error(judge_model):
    with serve(judge_handler(judge_model, mode="no_logprobs")) as server:
        with pytest.raises(LabError, match="no top log-probabilities"):
            served(server.base_url).read_number(NUMBER)
        with pytest.raises(LabError, match="no top log-probabilities"):
            served(server.base_url).read_yes_no(YES_NO)


def test_raw_text_prompts_need_the_tokenizer():
    with pytest.raises(LabError, match="reads a chat"):
        served("http://127.0.0.1:9/v1").read_number(JudgePrompt.raw("Score: "))


def test_exact_mode_needs_the_tokenizer():
    with pytest.raises(LabError, match="needs its tokenizer"):
        served("http://127.0.0.1:9/v1", mode="exact")


def test_a_record_recomputes_the_served_reading(judge_model):
    with serve(judge_handler(judge_model)) as server:
        reading = served(server.base_url, mode="top-k").read_number(NUMBER, floor=0.0)
    again = NumberReading.from_record(reading.to_record(), floor=0.0)
    assert again.distribution == reading.distribution
    assert reading.record["requests"] == len(server.requests)


def test_a_node_cutoff_reports_the_mass_it_skipped(judge_model, local_reading):
    with serve(judge_handler(judge_model)) as server:
        reading = served(
            server.base_url, tokenizer=judge_model.tokenizer, exact=ExactSettings(node_cutoff=0.02)
        ).read_number(NUMBER, floor=0.0)
    skipped = reading.record["skipped_mass"]
    assert skipped > 0 and not reading.exact
    assert reading.coverage <= local_reading.coverage + 1e-6
    assert reading.record["requests"] < 102


def test_identity_holds_what_determines_answers_and_no_transport(judge_model):
    judge = served("http://127.0.0.1:9/v1", tokenizer=judge_model.tokenizer)
    identity = judge.identity()
    assert identity["mode"] == "exact" and identity["tokenizer_sha256"]
    assert "base_url" not in str(identity) and "127.0.0.1" not in str(identity)
    other = served("http://127.0.0.1:10/v1", tokenizer=judge_model.tokenizer)
    assert other.identity() == identity


def test_provider_apis_are_not_sent_vllm_only_fields():
    from diarylab.rubric.judging.served_chat import ChatReader

    provider = ServedClient("openai/gpt-judge", EndpointSettings())
    request = ChatReader(provider, ChatSettings(prefill=False)).request(NUMBER, "", max_tokens=5)
    assert request.extra_body == "{}"
    own = ServedClient("hosted_vllm/j", EndpointSettings(base_url="http://127.0.0.1:9/v1"))
    request = ChatReader(own, ChatSettings(prefill=False)).request(NUMBER, "", max_tokens=5)
    assert '"return_tokens_as_token_ids": false' in request.extra_body
