"""The llama.cpp-shaped stand-in (testing/fake_judge_llamacpp.py cites tools/server): it keeps the
prefill verbatim, ignores logprob_token_ids, puts `id` on every entry, takes top_logprobs beyond
20, answers the completions endpoint with the chat-style logprobs list and echoes no prompt."""

from __future__ import annotations

import httpx
import pytest

from diarylab.testing.fake_judge_engine import llamacpp_logprob
from diarylab.testing.fake_judge_server import judge_handler
from diarylab.testing.fake_openai import serve

MSGS = [
    {"role": "user", "content": "Rate the entry, 0 to 100."},
    {"role": "assistant", "content": "Score: "},
]
CHAT, CMPL = "/v1/chat/completions", "/v1/completions"


@pytest.fixture(scope="module")
def llama(tiny_model):
    return judge_handler(tiny_model, server="llamacpp")


@pytest.fixture(scope="module")
def prompt(tiny_model):
    """The template's rendering of the messages before the prefill, then the prefill as is."""
    head = tiny_model.render_chat(MSGS[:-1], add_generation_prompt=True)
    return tiny_model.encode(head + MSGS[-1]["content"])


@pytest.fixture(scope="module")
def row(tiny_model, prompt):
    return tiny_model.next_token_logprobs(prompt)[0]


def test_chat_keeps_the_prefill_and_ignores_explicit_ids_over_http(llama, tiny_model, row):
    body = {
        "messages": MSGS,
        "continue_final_message": True,
        "add_generation_prompt": True,  # vLLM refuses the pair; llama.cpp reads neither here
        "max_tokens": 1,
        "logprobs": True,
        "logprob_token_ids": [int(row.argmin())],
        "return_token_ids": True,
    }
    with serve(llama) as server:
        reply = httpx.post(f"http://127.0.0.1:{server.port}{CHAT}", json=body, timeout=60)
    assert reply.status_code == 200
    answer = reply.json()
    [choice] = answer["choices"]
    assert "prompt_token_ids" not in answer and "token_ids" not in choice
    [position] = choice["logprobs"]["content"]
    assert position["id"] == int(row.argmax()) and choice["finish_reason"] == "length"
    tops = position["top_logprobs"]
    assert [t["id"] for t in tops] == [int(i) for i in row.topk(20).indices]  # default 20
    for t in tops:
        assert t["logprob"] == pytest.approx(float(row[t["id"]]), abs=1e-6)
        assert bytes(t["bytes"]).decode() == t["token"]


def test_completions_take_top_logprobs_far_beyond_20(llama, prompt, row):
    body = {"prompt": prompt, "max_tokens": 1, "logprobs": 300, "logprob_token_ids": [3]}
    status, answer = llama.answer(CMPL, body | {"return_token_ids": True})
    assert status == 200 and answer["object"] == "text_completion"
    [choice] = answer["choices"]
    assert set(choice) == {"text", "index", "logprobs", "finish_reason"}
    [position] = choice["logprobs"]["content"]
    assert set(position) == {"id", "token", "bytes", "logprob", "top_logprobs"}
    tops = position["top_logprobs"]
    assert len(tops) == 300 and [t["id"] for t in tops] == [int(i) for i in row.topk(300).indices]
    assert [t["logprob"] for t in tops] == [llamacpp_logprob(float(row[t["id"]])) for t in tops]
    assert answer["usage"]["prompt_tokens"] == len(prompt)


def test_the_whole_vocabulary_when_asked(llama, tiny_model, prompt):
    vocab = tiny_model.model.config.vocab_size
    body = {"prompt": prompt, "max_tokens": 1, "n_probs": vocab + 10}
    tops = llama.answer(CMPL, body)[1]["choices"][0]["logprobs"]["content"][0]["top_logprobs"]
    assert len(tops) == vocab
    # Control tokens print as "" there, so several distinct ids share that text.
    assert sum(t["token"] == "" for t in tops) >= 2 and len({t["id"] for t in tops}) == vocab


@pytest.mark.parametrize(
    ("path", "body", "message"),
    [
        (CHAT, {"messages": MSGS, "top_logprobs": 5}, "top_logprobs requires logprobs"),
        (CMPL, {"prompt": [1, 10**7]}, "Prompt contains invalid tokens"),
        (CMPL, {"max_tokens": 1}, '"prompt" is required'),
        (CMPL, {"prompt": [1], "echo": True}, "Only no echo is supported"),
        (CHAT, {"messages": [*MSGS, MSGS[-1]]}, "2 or more assistant messages"),
    ],
)
def test_llamacpp_errors(llama, path, body, message):
    status, answer = llama.answer(path, body)
    assert status == 400
    assert answer == {
        "error": {
            "code": 400,
            "message": answer["error"]["message"],
            "type": "invalid_request_error",
        }
    }
    assert message in answer["error"]["message"]


def test_llamacpp_has_no_renderers_or_modes(tiny_model):
    with pytest.raises(ValueError):
        judge_handler(tiny_model, server="llamacpp", renderer="trim")
    with pytest.raises(ValueError):
        judge_handler(tiny_model, server="llamacpp", mode="openai")
