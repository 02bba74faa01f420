"""The judge stand-in behaves like vLLM 0.33.0 (testing/fake_judge_server.py cites the files): each
behaviour is checked on the handler, and over real HTTP with plain httpx, against the tiny
model's own next-token log-probabilities."""

from __future__ import annotations

import threading

import httpx
import pytest

from diarylab.model_access.local import LocalModel
from diarylab.testing.fake_judge_server import judge_handler
from diarylab.testing.fake_openai import serve
from diarylab.testing.judge_helpers import bias_logits
from diarylab.testing.tiny_models import build_tiny_llama

MSGS = [
    {"role": "user", "content": "Rate the entry, 0 to 100."},
    {"role": "assistant", "content": "Score: "},
]
CHAT = {
    "messages": MSGS,
    "continue_final_message": True,
    "add_generation_prompt": False,
    "max_tokens": 1,
    "logprobs": True,
}


@pytest.fixture(scope="module")
def vllm(tiny_model):
    return judge_handler(tiny_model)


@pytest.fixture(scope="module")
def prefill_ids(tiny_model):
    return tiny_model.chat_ids(MSGS, continue_final_message=True)


@pytest.fixture(scope="module")
def row(tiny_model, prefill_ids):
    return tiny_model.next_token_logprobs(prefill_ids)[0]


def post(server, path: str, body: dict) -> tuple[int, dict]:
    reply = httpx.post(f"http://127.0.0.1:{server.port}{path}", json=body, timeout=60)
    return reply.status_code, reply.json()


def test_ids_replace_top_k_after_the_sampled_token_over_http(vllm, tiny_model, prefill_ids, row):
    sampled = int(row.argmax())
    a, b = (int(i) for i in row.argsort()[:2])  # the two least likely: never in a top-k
    body = CHAT | {"top_logprobs": 5, "logprob_token_ids": [a, b, a, sampled]}
    with serve(vllm) as server:
        status, answer = post(server, "/v1/chat/completions", body | {"return_token_ids": True})
    assert status == 200 and server.paths == ["/v1/chat/completions"]
    [choice] = answer["choices"]
    [position] = choice["logprobs"]["content"]
    tops = position["top_logprobs"]
    text = tiny_model.tokenizer.decode
    assert [t["token"] for t in tops] == [text([sampled]), text([a]), text([b])]
    for entry, token in zip(tops, (sampled, a, b), strict=True):
        assert entry["logprob"] == pytest.approx(float(row[token]), abs=1e-6)
        assert bytes(entry["bytes"]) == entry["token"].encode()
    assert position["token"] == text([sampled])
    assert answer["prompt_token_ids"] == prefill_ids and "prompt_token_ids" not in choice
    assert choice["token_ids"] == [sampled] and choice["finish_reason"] == "length"
    assert text(prefill_ids).endswith("Score: ")  # this template keeps the prefill's space


def test_top_k_without_ids_is_the_top_k_with_the_sampled_token_first(vllm, row):
    status, answer = vllm.answer("/v1/chat/completions", CHAT | {"top_logprobs": 4})
    assert status == 200
    tops = answer["choices"][0]["logprobs"]["content"][0]["top_logprobs"]
    expected = row.topk(4)
    assert [t["logprob"] for t in tops] == pytest.approx([float(v) for v in expected.values])


def refused(handler, path: str, body: dict) -> dict:
    status, answer = handler.answer(path, body)
    assert status == 400, answer
    return answer["error"]


CHAT_PATH, CMPL_PATH = "/v1/chat/completions", "/v1/completions"


def test_vllm_refuses_what_its_validators_refuse(vllm, tiny_model, prefill_ids):
    vocab = tiny_model.model.config.vocab_size
    error = refused(vllm, CHAT_PATH, CHAT | {"logprobs": False, "logprob_token_ids": [5]})
    assert error["type"] == "Bad Request" and error["param"] == "logprob_token_ids"
    assert "`logprobs` must be set to true" in error["message"]
    error = refused(vllm, CHAT_PATH, CHAT | {"top_logprobs": 21})
    assert error["type"] == "BadRequestError" and error["param"] == "logprobs"
    assert "greater than max allowed: 20" in error["message"]
    error = refused(vllm, CHAT_PATH, CHAT | {"logprob_token_ids": list(range(129))})
    assert error["param"] == "logprob_token_ids" and "max allowed: 128" in error["message"]
    error = refused(vllm, CHAT_PATH, CHAT | {"logprob_token_ids": [3, vocab]})
    assert f"[{vocab}]" in error["message"] and "out-of-vocab" in error["message"]
    error = refused(vllm, CHAT_PATH, CHAT | {"add_generation_prompt": True})
    assert (
        "Cannot set both `continue_final_message` and `add_generation_prompt`" in error["message"]
    )
    # Omitted, add_generation_prompt defaults to true and transformers refuses the pair.
    body = {k: v for k, v in CHAT.items() if k != "add_generation_prompt"}
    assert "not compatible" in refused(vllm, CHAT_PATH, body)["message"]
    assert (
        "`logprobs` must be set to true"
        in refused(vllm, CHAT_PATH, CHAT | {"logprobs": False, "top_logprobs": 3})["message"]
    )
    assert (
        "positive value or -1" in refused(vllm, CHAT_PATH, CHAT | {"top_logprobs": -2})["message"]
    )
    cmpl = {"prompt": prefill_ids, "max_tokens": 1}
    error = refused(vllm, CMPL_PATH, cmpl | {"logprob_token_ids": [5]})
    assert error["message"].count("`logprobs` must be set.") == 1
    assert (
        "greater than max allowed" in refused(vllm, CMPL_PATH, cmpl | {"logprobs": -1})["message"]
    )
    error = refused(vllm, CMPL_PATH, cmpl | {"prompt": [*prefill_ids, vocab]})
    assert error["message"] == f"Token id {vocab} is out of vocabulary"
    assert refused(vllm, CMPL_PATH, cmpl | {"prompt": [-1]})["param"] == "body.prompt"


def test_what_vllm_accepts_beside_its_400s(vllm, tiny_model, prefill_ids):
    # With ids, top_logprobs/logprobs are not capped; 128 ids is the most; logprobs=0 will do.
    status, answer = vllm.answer(
        CHAT_PATH, CHAT | {"top_logprobs": 50, "logprob_token_ids": list(range(1, 129))}
    )
    assert status == 200
    assert len(answer["choices"][0]["logprobs"]["content"][0]["top_logprobs"]) >= 128
    body = {"prompt": prefill_ids, "max_tokens": 1, "logprobs": 0, "logprob_token_ids": [7]}
    assert vllm.answer(CMPL_PATH, body)[0] == 200
    loose = judge_handler(tiny_model, max_logprobs=-1)  # --max-logprobs -1: the vocabulary
    assert loose.answer(CHAT_PATH, CHAT | {"top_logprobs": 25})[0] == 200


def test_prompts_longer_than_the_context_and_the_0_32_answer(tiny_model, prefill_ids):
    # Held to a real 0.32.0 server by tests/test_vllm_standin.py (the `vllm` tier).
    short = judge_handler(tiny_model, max_model_len=len(prefill_ids) + 2)
    body = {"prompt": [*prefill_ids, 5, 5, 5], "max_tokens": 1}
    error = refused(short, CMPL_PATH, body)
    assert (
        error["param"] == "input_tokens"
        and f"contains {len(prefill_ids) + 3} " in (error["message"])
    )
    error = refused(short, CMPL_PATH, body | {"prompt": [*prefill_ids, 5, 5]})
    assert error["param"] == "max_tokens" and "at least 1, got 0" in error["message"]
    status, answer = short.answer(CMPL_PATH, body | {"prompt": prefill_ids, "max_tokens": 9})
    assert status == 200 and answer["usage"]["completion_tokens"] == 2  # cut to what is left
    assert answer["system_fingerprint"].startswith("vllm-0.32.0-")
    assert "weight_versions" not in answer["choices"][0]
    newer = judge_handler(tiny_model, version="0.33.0").answer(CMPL_PATH, body | {"max_tokens": 1})
    assert "weight_versions" in newer[1]["choices"][0]


def test_token_id_strings_follow_the_request_then_the_server_default(tiny_model, row):
    sampled = int(row.argmax())
    decoded = tiny_model.tokenizer.decode([sampled])
    body = CHAT | {"logprob_token_ids": [9]}
    for handler, flag, as_ids in [
        (judge_handler(tiny_model), True, True),
        (judge_handler(tiny_model), None, False),
        (judge_handler(tiny_model, token_ids_default=True), None, True),
        (judge_handler(tiny_model, token_ids_default=True), False, False),
    ]:
        sent = body if flag is None else body | {"return_tokens_as_token_ids": flag}
        position = handler.answer(CHAT_PATH, sent)[1]["choices"][0]["logprobs"]["content"][0]
        names = [t["token"] for t in position["top_logprobs"]]
        assert names == (
            [f"token_id:{sampled}", "token_id:9"]
            if as_ids
            else [decoded, tiny_model.tokenizer.decode([9])]
        )
        # The sampled entry's bytes are its text's; an alternative's are the printed string's.
        assert bytes(position["bytes"]) == decoded.encode()
        assert bytes(position["top_logprobs"][1]["bytes"]) == names[1].encode()


def test_completions_key_alternatives_by_printed_string(vllm, tiny_model, prefill_ids, row):
    """Two byte-fallback pieces print as "" at the first position (no earlier token completes
    them): the completions dict keeps one key, the chat list both; token ids keep them apart."""
    x, y = 111, 112  # "¡" and "¢": lone UTF-8 continuation bytes in SmolLM2's vocabulary
    assert tiny_model.tokenizer.decode([x]).endswith("\ufffd")
    body = {"prompt": prefill_ids, "max_tokens": 1, "logprobs": 0, "logprob_token_ids": [x, y]}
    [top] = vllm.answer(CMPL_PATH, body)[1]["choices"][0]["logprobs"]["top_logprobs"]
    assert top[""] == pytest.approx(float(row[y]), abs=1e-6) and len(top) == 2
    chat = vllm.answer(CHAT_PATH, CHAT | {"logprob_token_ids": [x, y]})[1]
    tokens = [t["token"] for t in chat["choices"][0]["logprobs"]["content"][0]["top_logprobs"]]
    assert tokens[1:] == ["", ""]
    by_id = vllm.answer(CMPL_PATH, body | {"return_tokens_as_token_ids": True})[1]
    [top] = by_id["choices"][0]["logprobs"]["top_logprobs"]
    assert set(top) == {f"token_id:{int(row.argmax())}", f"token_id:{x}", f"token_id:{y}"}


def test_completions_read_token_id_and_string_prompts_alike(vllm, tiny_model, prefill_ids, row):
    by_ids = vllm.answer(
        CMPL_PATH, {"prompt": prefill_ids, "max_tokens": 1, "logprobs": 5, "return_token_ids": True}
    )[1]
    [choice] = by_ids["choices"]
    assert choice["prompt_token_ids"] == prefill_ids and choice["token_ids"] == [int(row.argmax())]
    logprobs = choice["logprobs"]
    assert logprobs["token_logprobs"] == [pytest.approx(float(row.max()), abs=1e-6)]
    assert sorted(logprobs["top_logprobs"][0].values(), reverse=True) == pytest.approx(
        [float(v) for v in row.topk(5).values], abs=1e-6
    )
    text = tiny_model.tokenizer.decode(prefill_ids)
    by_text = vllm.answer(CMPL_PATH, {"prompt": text, "max_tokens": 1, "logprobs": 5})[1]
    assert by_text["choices"][0]["logprobs"] == logprobs
    assert by_ids["usage"]["prompt_tokens"] == len(prefill_ids)


def test_an_end_of_sequence_token_stops_with_finish_reason_stop(shipped_tokenizer):
    model = LocalModel(build_tiny_llama(shipped_tokenizer, seed=3), shipped_tokenizer, spec="e")
    eos = shipped_tokenizer.eos_token_id
    bias_logits(model, {eos: 50.0})
    handler = judge_handler(model)
    answer = handler.answer(CHAT_PATH, CHAT | {"max_tokens": 5, "return_token_ids": True})[1]
    [choice] = answer["choices"]
    assert choice["finish_reason"] == "stop" and choice["token_ids"] == [eos]
    assert choice["message"]["content"] == "" and len(choice["logprobs"]["content"]) == 1
    cmpl = handler.answer(CMPL_PATH, {"prompt": [1, 2, 3], "max_tokens": 4})[1]["choices"][0]
    assert cmpl["finish_reason"] == "stop" and cmpl["logprobs"] is None


def test_one_forward_pass_per_prompt_under_concurrent_requests(tiny_model, prefill_ids):
    handler = judge_handler(tiny_model)
    prompts = [prefill_ids + [d] for d in (15, 16, 17, 18)]
    answers: dict[int, list] = {}
    with serve(handler) as server:

        def ask(k: int) -> None:
            body = {
                "prompt": prompts[k % 4],
                "max_tokens": 1,
                "logprobs": 0,
                "logprob_token_ids": list(range(k % 3 * 100, k % 3 * 100 + 128)),
            }
            answers[k] = post(server, CMPL_PATH, body)[1]["choices"][0]["logprobs"][
                "token_logprobs"
            ]

        threads = [threading.Thread(target=ask, args=(k,)) for k in range(24)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert sorted(answers) == list(range(24))  # every request was answered
    assert handler.engine is not None and handler.engine.forward_passes == 4
    expected = [float(tiny_model.next_token_logprobs(p)[0].max()) for p in prompts]
    for k, value in answers.items():
        assert value == [pytest.approx(expected[k % 4], abs=1e-5)]


def test_old_modes_and_routes(tiny_model):
    body = CHAT | {"top_logprobs": 3, "logprob_token_ids": [9]}
    status, answer = judge_handler(tiny_model, mode="openai")(body)  # no path: the chat route
    assert status == 200
    assert len(answer["choices"][0]["logprobs"]["content"][0]["top_logprobs"]) == 3
    assert judge_handler(tiny_model, mode="no_logprobs")(body)[1]["choices"][0]["logprobs"] is None
    assert judge_handler(tiny_model).answer("/v1/embeddings", body)[0] == 404
