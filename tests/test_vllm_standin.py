"""The vLLM judge stand-in (testing/fake_judge_server.py) answers like the real server where the
lab's tests lean on it: the same fields in every answer, the same system_fingerprint form, and
the same refusals of prompts that do not fit --max-model-len (the `vllm` tier; both sides have
the SmolLM2 tokenizer and max_model_len 2048, so the answers can be compared field by field)."""

from __future__ import annotations

import re

import httpx
import pytest

from diarylab.testing.fake_judge_server import judge_handler
from diarylab.testing.fake_openai import serve
from diarylab.testing.vllm_server import MAX_MODEL_LEN

pytestmark = pytest.mark.vllm

CHAT = {"messages": [{"role": "user", "content": "hi"}], "max_tokens": 2, "logprobs": True}
COMPLETION = {"prompt": [1, 2, 3], "max_tokens": 2, "logprobs": 0, "return_token_ids": True}


@pytest.fixture(scope="module")
def standin(tiny_model):
    with serve(judge_handler(tiny_model, max_model_len=MAX_MODEL_LEN)) as server:
        yield server.base_url


def post(base_url: str, path: str, body: dict, model: str) -> tuple[int, dict]:
    answer = httpx.post(f"{base_url}/{path}", json=body | {"model": model}, timeout=120)
    return answer.status_code, answer.json()


def both(vllm_server, standin, path: str, body: dict) -> tuple[tuple[int, dict], ...]:
    real = post(vllm_server.base_url, path, body, vllm_server.served_name)
    return real, post(standin, path, body, "fake-judge")


def shape(answer: dict) -> dict[str, list[str]]:
    choice = answer["choices"][0]
    out = {"answer": sorted(answer), "choice": sorted(choice), "usage": sorted(answer["usage"])}
    if "message" in choice:
        out["message"] = sorted(choice["message"])
    return out


@pytest.mark.parametrize(
    ("path", "body"),
    [("chat/completions", CHAT), ("completions", COMPLETION)],
    ids=["chat", "completions"],
)
def test_answers_have_the_real_servers_fields(vllm_server, standin, path, body):
    (status, real), (fake_status, fake) = both(vllm_server, standin, path, body)
    assert status == fake_status == 200
    assert shape(fake) == shape(real)
    assert "weight_versions" not in real["choices"][0]  # 0.33.0's field; 0.32.0 has none
    for answer in (real, fake):
        assert re.fullmatch(r"vllm-0\.32\.0-[0-9a-f]{8}", answer["system_fingerprint"])


@pytest.mark.parametrize(
    ("length", "max_tokens"),
    [(MAX_MODEL_LEN + 52, 1), (MAX_MODEL_LEN, 1)],
    ids=["past-the-context", "filling-the-context"],
)
def test_prompts_that_do_not_fit_are_refused_alike(vllm_server, standin, length, max_tokens):
    body = {"prompt": [1] * length, "max_tokens": max_tokens}
    (status, real), (fake_status, fake) = both(vllm_server, standin, "completions", body)
    assert status == fake_status == 400
    assert fake == real, (fake, real)
    assert real["error"]["param"] == ("input_tokens" if length > MAX_MODEL_LEN else "max_tokens")


def test_a_chat_past_the_context_is_refused_alike(vllm_server, standin):
    body = {"messages": [{"role": "user", "content": "hi " * 2100}], "max_tokens": 2}
    (status, real), (fake_status, fake) = both(vllm_server, standin, "chat/completions", body)
    assert status == fake_status == 400
    assert fake == real, (fake, real)
    assert "at least 2049 input tokens" in real["error"]["message"]


def test_the_output_is_cut_to_the_context_left(vllm_server, standin):
    body = {"prompt": [1] * (MAX_MODEL_LEN - 1), "max_tokens": 5}
    (status, real), (fake_status, fake) = both(vllm_server, standin, "completions", body)
    assert status == fake_status == 200
    for answer in (real, fake):
        assert answer["usage"]["completion_tokens"] == 1
        assert answer["choices"][0]["finish_reason"] == "length"
