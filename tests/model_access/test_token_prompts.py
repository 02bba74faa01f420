"""The served door's token-prompt path: ServedClient.complete_prompt through litellm and real HTTP
against small loopback stand-ins that answer /v1/completions the way vLLM 0.33.0 and llama.cpp's
server do. Each copied behaviour names the file it comes from (vLLM: inside the
vllm-0.33.0 wheel; llama.cpp: ggml-org/llama.cpp). The full judge stand-in is
testing/fake_judge_server.py; these stay minimal on purpose."""

from __future__ import annotations

import json
import math
import threading
import time
from typing import Any

import numpy as np
import pytest

from diarylab.foundation.errors import LabError
from diarylab.model_access.served import (
    Alternative,
    ServedClient,
    TokenCompletion,
    TokenPromptRequest,
    TransportFailure,
)
from diarylab.model_access.settings import EndpointSettings
from diarylab.testing.fake_openai import serve

# A toy vocabulary whose ids 5 and 6 print alike (both ""), as two real tokens can.
VOCAB = ["<s>", "0", "1", "2", " 0", "", ""]
LOGITS = [-9.0, 2.0, 1.0, 0.5, 0.2, 1.5, 1.4]
_NORM = math.log(sum(math.exp(v) for v in LOGITS))
LOGPROBS = [v - _NORM for v in LOGITS]
SAMPLED = max(range(len(VOCAB)), key=LOGPROBS.__getitem__)  # greedy: temperature 0


def _error(message: str, param: str) -> tuple[int, dict[str, Any]]:
    # vllm/entrypoints/serve/engine/protocol.py ErrorResponse/ErrorInfo, sent with status 400.
    body = {"message": message, "type": "BadRequestError", "param": param, "code": 400}
    return 400, {"error": body}


def vllm_completions(body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    ids = body.get("logprob_token_ids")
    k = body.get("logprobs")
    # vllm/entrypoints/openai/completion/protocol.py, CompletionRequest.check_logprobs.
    if ids and k is None:
        return _error("when using `logprob_token_ids`, `logprobs` must be set.", "logprobs")
    # vllm/sampling_params.py, MAX_LOGPROB_TOKEN_IDS = 128 and its validation.
    if ids and len(ids) > 128:
        return _error(
            f"Requested logprob_token_ids of length {len(ids)}, which is greater than max "
            "allowed: 128",
            "logprob_token_ids",
        )
    # vllm/v1/sample/sampler.py gather_logprobs: the sampled token first, then the top k (or,
    # with logprob_token_ids, the requested ids); a dict by id keeps each id once.
    ranked = sorted(range(len(VOCAB)), key=lambda i: -LOGPROBS[i])
    order = list(dict.fromkeys([SAMPLED, *(ids if ids else ranked[: k or 0])]))
    # vllm/entrypoints/generate/base/serving.py completion_top_logprobs_limit: the first
    # logprobs + 1 entries, or all of them when ids were asked for.
    if not ids:
        order = order[: (k or 0) + 1]
    as_ids = bool(body.get("return_tokens_as_token_ids"))

    def name(i: int) -> str:
        # serving.py _get_decoded_token / format_token_id_placeholder.
        return f"token_id:{i}" if as_ids else VOCAB[i]

    logprobs = None
    if k is not None:
        # vllm/entrypoints/openai/completion/serving.py _create_completion_logprobs: a
        # {text: logprob} dict per position (so alike texts collide), log-probs clamped at -9999.
        logprobs = {
            "text_offset": [0],
            "token_logprobs": [max(LOGPROBS[SAMPLED], -9999.0)],
            "tokens": [name(SAMPLED)],
            "top_logprobs": [{name(i): max(LOGPROBS[i], -9999.0) for i in order}],
        }
    back = bool(body.get("return_token_ids"))
    # completion/protocol.py CompletionResponseChoice / CompletionResponse.
    choice = {
        "index": 0,
        "text": VOCAB[SAMPLED],
        "logprobs": logprobs,
        "finish_reason": "length",
        "stop_reason": None,
        "token_ids": [SAMPLED] if back else None,
        "prompt_logprobs": None,
        "prompt_token_ids": list(body["prompt"]) if back else None,
    }
    n = len(body["prompt"])
    return 200, {
        "id": "cmpl-fake",
        "object": "text_completion",
        "created": int(time.time()),
        "model": "fake-vllm",
        "choices": [choice],
        "usage": {"prompt_tokens": n, "completion_tokens": 1, "total_tokens": n + 1},
    }


def llamacpp_completions(body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    # llama.cpp tools/server/server-task.cpp: params_from_json_cmpl reads `logprobs` as n_probs
    # (logprob_token_ids is unknown to it); to_json_oaicompat answers /v1/completions with
    # logprobs = {content: probs_vector_to_json(...)}: `id`, `token`, `bytes`, `logprob` on
    # every entry; a probability of 0 is written as the lowest float (logarithm()).
    n_probs = int(body.get("logprobs") or 0)
    ranked = sorted(range(len(VOCAB)), key=lambda i: -LOGPROBS[i])

    def entry(i: int) -> dict[str, Any]:
        text = VOCAB[i]
        return {"id": i, "token": text, "bytes": list(text.encode()), "logprob": LOGPROBS[i]}

    top = [entry(i) for i in ranked[:n_probs]]
    if n_probs > len(VOCAB) - 1:
        top[-1]["logprob"] = -3.4028234663852886e38
    logprobs = {"content": [{**entry(SAMPLED), "top_logprobs": top}]} if n_probs else None
    n = len(body["prompt"])
    return 200, {
        "choices": [
            {"text": VOCAB[SAMPLED], "index": 0, "logprobs": logprobs, "finish_reason": "length"}
        ],
        "created": int(time.time()),
        "model": "fake-llamacpp",
        "system_fingerprint": "b0",
        "object": "text_completion",
        "usage": {"completion_tokens": 1, "prompt_tokens": n, "total_tokens": n + 1},
        "id": "chatcmpl-fake",
    }


PROVIDERS = ["hosted_vllm/fake-judge", "openai/fake-judge", "openai/gpt-4o"]
EXACT = {"return_token_ids": True, "return_tokens_as_token_ids": True}


def client(url: str | None, model: str = "hosted_vllm/fake-judge", **kw: Any) -> ServedClient:
    settings = EndpointSettings(base_url=url, **{"max_retries": 3, "backoff_s": 0.0, **kw})
    return ServedClient(model, settings, sleep=lambda s: None)


@pytest.mark.parametrize("model", PROVIDERS)
def test_token_ids_go_out_as_the_prompt_and_every_asked_id_comes_back(model):
    request = TokenPromptRequest.of([1, 2, 3], logprob_token_ids=[5, 6, 2], extra_body=EXACT)
    with serve(vllm_completions) as server:
        out = client(server.base_url, model).complete_prompt(request)
    sent = server.requests[0]
    # The completions body (a chat body would carry `messages`), even for a chat model's name.
    assert "messages" not in sent and sent["prompt"] == [1, 2, 3]
    assert sent["model"] == model.split("/", 1)[1]
    assert sent["max_tokens"] == 1 and sent["temperature"] == 0
    # vLLM needs `logprobs` beside the ids; its number is ignored then.
    assert sent["logprobs"] == 0 and sent["logprob_token_ids"] == [5, 6, 2]
    assert sent["return_token_ids"] is True and sent["return_tokens_as_token_ids"] is True
    assert not {"max_retries", "num_retries", "extra_body"} & set(sent)
    assert sent.get("stream") in (None, False)

    assert out.text == VOCAB[SAMPLED] and out.finish_reason == "length"
    assert out.prompt_token_ids == (1, 2, 3) and out.served_model == "fake-vllm"
    (position,) = out.positions
    assert position.token == f"token_id:{SAMPLED}" and position.token_id == SAMPLED
    assert position.top == tuple(
        Alternative(f"token_id:{i}", LOGPROBS[i], i) for i in (SAMPLED, 5, 6, 2)
    )
    assert out.raw_usage["prompt_tokens"] == 3


def test_without_token_id_strings_vllm_merges_tokens_that_print_alike():
    # What the legacy {text: logprob} shape can carry: ids 5 and 6 both print "" and the server
    # keeps one of them. The parse says so by giving no id; asking for return_tokens_as_token_ids
    # (above) keeps them apart.
    request = TokenPromptRequest.of([1], logprob_token_ids=[5, 6])
    with serve(vllm_completions) as server:
        out = client(server.base_url).complete_prompt(request)
    (position,) = out.positions
    assert [a.text for a in position.top] == [VOCAB[SAMPLED], ""]
    assert all(a.token_id is None for a in position.top)
    assert out.prompt_token_ids is None and position.token_id is None


def test_top_k_asks_for_the_integer_logprobs_and_gets_k_plus_the_sampled_token():
    request = TokenPromptRequest.of([4, 4], top_logprobs=3, extra_body=EXACT)
    with serve(vllm_completions) as server:
        out = client(server.base_url).complete_prompt(request)
    sent = server.requests[0]
    assert sent["logprobs"] == 3 and "logprob_token_ids" not in sent
    ranked = sorted(range(len(VOCAB)), key=lambda i: -LOGPROBS[i])
    assert [a.token_id for a in out.positions[0].top] == ranked[:3]


def test_no_logprobs_asked_none_sent_none_parsed():
    with serve(vllm_completions) as server:
        out = client(server.base_url).complete_prompt(TokenPromptRequest((7,), max_tokens=1))
    assert "logprobs" not in server.requests[0] and out.positions == ()
    assert out.text == VOCAB[SAMPLED]


def test_llamacpp_answers_in_the_chat_shape_with_an_id_on_every_entry():
    request = TokenPromptRequest.of([1, 2], top_logprobs=len(VOCAB), extra_body=EXACT)
    with serve(llamacpp_completions) as server:
        out = client(server.base_url).complete_prompt(request)
    (position,) = out.positions
    assert position.token_id == SAMPLED and position.token == VOCAB[SAMPLED]
    ranked = sorted(range(len(VOCAB)), key=lambda i: -LOGPROBS[i])
    assert [a.token_id for a in position.top] == ranked
    empties = [a for a in position.top if a.text == ""]
    assert sorted(a.token_id for a in empties) == [5, 6]  # alike, kept apart by id
    assert position.top[0].bytes == tuple(VOCAB[ranked[0]].encode())
    assert position.top[-1].logprob == -3.4028234663852886e38  # as the server wrote it
    assert out.prompt_token_ids is None  # llama.cpp echoes no prompt ids


def test_a_400_is_a_lab_error_naming_the_model_and_is_not_retried():
    request = TokenPromptRequest.of([1], logprob_token_ids=range(129))
    with serve(vllm_completions) as server:
        with pytest.raises(LabError, match="hosted_vllm/fake-judge") as caught:
            client(server.base_url, max_retries=5).complete_prompt(request)
    assert len(server.requests) == 1
    assert "BadRequestError" in str(caught.value) and "128" in str(caught.value)


@pytest.mark.parametrize("model", PROVIDERS[:2])
def test_server_errors_and_empty_bodies_are_retried(model):
    answers = [
        (500, {"error": {"message": "boom"}}),
        (200, {"id": "x", "object": "text_completion", "created": 0, "model": "m", "choices": []}),
    ]

    def flaky(body):
        return answers.pop(0) if answers else vllm_completions(body)

    with serve(flaky) as server:
        out = client(server.base_url, model).complete_prompt(TokenPromptRequest((1, 2)))
    assert out.text == VOCAB[SAMPLED] and len(server.requests) == 3


@pytest.mark.parametrize("model", PROVIDERS[:2])
def test_exactly_max_retries_plus_one_requests_and_retry_after_honoured(model):
    sleeps: list[float] = []
    down = (503, {"error": {"message": "down"}}, {"Retry-After": "1"})
    with serve(lambda body: down) as server:
        settings = EndpointSettings(base_url=server.base_url, max_retries=2, backoff_s=0.0)
        door = ServedClient(model, settings, sleep=sleeps.append)
        with pytest.raises(TransportFailure, match="no answer after 3 attempts"):
            door.complete_prompt(TokenPromptRequest((1,)))
    # Neither litellm nor the OpenAI SDK under its text-completion handler adds retries of its own.
    assert len(server.requests) == 3 and sleeps == [1.0, 1.0]


def test_no_try_runs_past_the_retry_budget():
    release = threading.Event()

    def hang(body):
        release.wait(30)
        return vllm_completions(body)

    with serve(hang) as server:
        start = time.monotonic()
        with pytest.raises(TransportFailure):
            client(
                server.base_url, max_retries=0, timeout_s=30, retry_budget_s=1.5
            ).complete_prompt(TokenPromptRequest((1,)))
        took = time.monotonic() - start
        release.set()
    assert took < 8, took


def test_the_key_is_sent_and_never_stored(monkeypatch):
    monkeypatch.setenv("FAKE_JUDGE_KEY", "sk-judge-secret")
    request = TokenPromptRequest.of([1, 2], logprob_token_ids=[5], extra_body=EXACT)
    with serve(vllm_completions) as server:
        out = client(server.base_url, api_key_env="FAKE_JUDGE_KEY").complete_prompt(request)
    headers = {k.lower(): v for k, v in server.headers[0].items()}
    assert headers.get("authorization") == "Bearer sk-judge-secret"
    assert "sk-judge" not in repr(out.to_record()) and "sk-judge" not in repr(request.key_fields())
    again = TokenCompletion.from_record(json.loads(json.dumps(out.to_record())))
    assert again == out


def test_key_fields_hold_what_determines_the_result_and_nothing_of_the_transport():
    a = TokenPromptRequest.of([1, 2], logprob_token_ids=[5], extra_body=EXACT)
    assert (
        a.key_fields()
        == TokenPromptRequest.of((1, 2), logprob_token_ids=(5,), extra_body=EXACT).key_fields()
    )
    assert a.key_fields() != TokenPromptRequest.of([1, 2], logprob_token_ids=[5]).key_fields()
    assert (
        a.key_fields()
        != TokenPromptRequest.of([1, 3], logprob_token_ids=[5], extra_body=EXACT).key_fields()
    )
    assert a.key_fields()["endpoint"] == "completions"
    assert not {"api_base", "timeout", "api_key", "max_retries"} & set(a.key_fields())


def test_requests_take_numpy_ids_and_refuse_what_is_not_a_token_prompt():
    request = TokenPromptRequest.of(np.array([3, 1]), logprob_token_ids=np.array([2]))
    assert request.prompt_ids == (3, 1) and type(request.prompt_ids[0]) is int
    with pytest.raises(LabError, match="no tokens"):
        TokenPromptRequest(())
    with pytest.raises(LabError, match="not a token id"):
        TokenPromptRequest((1, -2))
    with pytest.raises(LabError, match="own fields"):
        TokenPromptRequest.of([1], extra_body={"logprobs": 5})


def test_a_provider_without_a_completions_endpoint_is_refused_before_any_call():
    with pytest.raises(LabError, match="no token-prompt door"):
        client(None, "anthropic/claude-x").complete_prompt(TokenPromptRequest((1,)))


def test_hosted_vllm_without_base_url_goes_where_litellm_would_send_it(monkeypatch):
    with serve(vllm_completions) as server:
        monkeypatch.setenv("HOSTED_VLLM_API_BASE", server.base_url)
        out = client(None).complete_prompt(TokenPromptRequest((1, 2)))
    assert out.text == VOCAB[SAMPLED] and server.requests[0]["prompt"] == [1, 2]
    monkeypatch.delenv("HOSTED_VLLM_API_BASE")
    with pytest.raises(LabError, match="base URL"):
        client(None).complete_prompt(TokenPromptRequest((1, 2)))


def test_complete_prompts_keeps_order():
    def echo_first(body):
        # Each choice answers its own prompt (a list of prompts is answered by choice index).
        status, payload = vllm_completions(body)
        prompts = body["prompt"] if isinstance(body["prompt"][0], list) else [body["prompt"]]
        for choice in payload["choices"]:
            choice["text"] = str(prompts[choice["index"]][0])
        return status, payload

    with serve(echo_first) as server:
        outs = client(server.base_url, concurrency=3).complete_prompts(
            [TokenPromptRequest((i, 0)) for i in range(6)]
        )
    assert [o.text for o in outs] == [str(i) for i in range(6)]
