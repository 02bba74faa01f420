"""The lean token-prompt transport (model_access/completions_http.py) against loopback stand-ins:
lists of prompts in one request, answers matched by choice index, one failed choice or request
asked again without losing the others, error statuses mapped to the retry rules as litellm maps
them, connections kept alive, and the probe's check that the server answers lists.

The list answers follow vLLM 0.32.0 (vllm/entrypoints/openai/completion/serving.py,
create_completion and request_output_to_completion_response: one choice per prompt, in prompt
order, index = the prompt's position, usage summed); the llama.cpp one follows
tools/server/server.cpp handle_completions_impl (a JSON array of one-prompt answers)."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from diarylab.foundation.errors import LabError
from diarylab.model_access.served import ServedClient, TokenPromptRequest, TransportFailure
from diarylab.model_access.settings import EndpointSettings
from diarylab.rubric.judging.served_exact import ExactSettings
from diarylab.rubric.judging.served_judge import ServedJudge
from diarylab.rubric.probe_prompt import number_probe
from diarylab.testing.fake_judge_server import judge_handler
from diarylab.testing.fake_openai import Routed, serve
from diarylab.testing.judge_tokenizers import mistral_style_tokenizer, tiny_judge

EXACT = {"return_token_ids": True, "return_tokens_as_token_ids": True}


def choice(index: int, prompt: list[int]) -> dict[str, Any]:
    """vLLM's CompletionResponseChoice for a prompt, answering with its own first id as text and
    log P(token 7) = -(its first id) / 10 (so each answer says which prompt it read)."""
    token = f"token_id:{prompt[0]}"
    return {
        "index": index,
        "text": str(prompt[0]),
        "logprobs": {
            "text_offset": [0],
            "token_logprobs": [-0.5],
            "tokens": [token],
            "top_logprobs": [{token: -0.5, "token_id:7": -prompt[0] / 10}],
        },
        "finish_reason": "length",
        "stop_reason": None,
        "token_ids": [prompt[0]],
        "prompt_logprobs": None,
        "prompt_token_ids": prompt,
    }


def vllm_list(body: dict[str, Any], order: slice = slice(None)) -> tuple[int, dict[str, Any]]:
    prompts = body["prompt"] if isinstance(body["prompt"][0], list) else [body["prompt"]]
    choices = [choice(i, p) for i, p in enumerate(prompts)][order]
    n = sum(len(p) for p in prompts)
    usage = {"prompt_tokens": n, "completion_tokens": len(prompts), "total_tokens": n + 1}
    return 200, {"id": "cmpl-x", "object": "text_completion", "created": 0, "model": "m",
                 "choices": choices, "usage": usage}  # fmt: skip


def client(url: str, **kw: Any) -> ServedClient:
    settings = EndpointSettings(base_url=url, **{"max_retries": 3, "backoff_s": 0.0, **kw})
    return ServedClient("hosted_vllm/fake-judge", settings, sleep=lambda s: None)


def requests(n: int) -> list[TokenPromptRequest]:
    return [
        TokenPromptRequest.of([10 + i, 1], logprob_token_ids=[7], extra_body=EXACT)
        for i in range(n)
    ]


def check(answers: list[Any], n: int) -> None:
    assert [a.text for a in answers] == [str(10 + i) for i in range(n)]
    assert [a.prompt_token_ids for a in answers] == [(10 + i, 1) for i in range(n)]
    for i, a in enumerate(answers):
        assert dict((t.token_id, t.logprob) for t in a.positions[0].top)[7] == -(10 + i) / 10


def test_lists_go_out_as_one_request_each_and_answers_are_matched_by_choice_index():
    # Choices written in reverse order: only their index says which prompt each answers.
    with serve(lambda body: vllm_list(body, slice(None, None, -1))) as server:
        answers, calls = client(server.base_url, prompts_per_request=4).complete_prompts_counted(
            requests(10)
        )
    check(answers, 10)
    assert calls == 3 and len(server.requests) == 3
    sizes = sorted(len(b["prompt"]) for b in server.requests)
    assert sizes == [2, 4, 4]
    body = server.requests[0]
    assert body["model"] == "fake-judge" and body["logprob_token_ids"] == [7]
    assert body["return_token_ids"] is True and body["logprobs"] == 0 and "extra_body" not in body


def test_one_missing_choice_is_asked_again_alone_and_the_others_are_kept():
    dropped = threading.Event()

    def drop_one(body):
        status, payload = vllm_list(body)
        if isinstance(body["prompt"][0], list) and not dropped.is_set():
            dropped.set()
            del payload["choices"][1]
        return status, payload

    with serve(drop_one) as server:
        answers, calls = client(server.base_url, prompts_per_request=4).complete_prompts_counted(
            requests(4)
        )
    check(answers, 4)
    # the list, then the one prompt it lacked on its own
    assert calls == 2 and [len(b["prompt"]) for b in server.requests] == [4, 2]
    assert server.requests[1]["prompt"] == [11, 1]


def test_one_failed_request_is_retried_and_the_other_lists_are_kept():
    failed = threading.Event()

    def fail_once(body):
        if body["prompt"][0] == [10, 1] and not failed.is_set():
            failed.set()
            return 503, {"error": {"message": "busy"}}, {"Retry-After": "0"}
        return vllm_list(body)

    with serve(fail_once) as server:
        answers, calls = client(server.base_url, prompts_per_request=3).complete_prompts_counted(
            requests(6)
        )
    check(answers, 6)
    assert calls == 2 and len(server.requests) == 3  # the failed list was sent again, whole
    firsts = [b["prompt"][0] for b in server.requests]
    assert firsts.count([10, 1]) == 2 and firsts.count([13, 1]) == 1


@pytest.mark.parametrize(
    ("status", "retried"),
    [
        (400, False),
        (401, False),
        (404, False),
        (422, False),
        (429, True),
        (500, True),
        (502, True),
        (403, True),
    ],  # fmt: skip
)
def test_error_statuses_follow_litellms_mapping(status, retried):
    # litellm/litellm_core_utils/exception_mapping_utils.py, exception_type(), openai branch:
    # 400/422 BadRequestError, 401 AuthenticationError, 404 NotFoundError (a LabError at once);
    # 429, 500, 502 and any other status (403 included) transient.
    with serve(lambda body: (status, {"error": {"message": f"no ({status})"}})) as server:
        kind = TransportFailure if retried else LabError
        with pytest.raises(kind, match=f"no \\({status}\\)") as caught:
            client(server.base_url, max_retries=2).complete_prompt(requests(1)[0])
    assert len(server.requests) == (3 if retried else 1)
    assert retried or not isinstance(caught.value, TransportFailure)


def test_a_body_that_is_no_completions_object_is_retried_as_an_empty_answer():
    answers = [(200, "not a completion")]

    def garbled(body):
        return answers.pop() if answers else vllm_list(body)

    with serve(garbled) as server:
        (answer,) = client(server.base_url).complete_prompts(requests(1))
    assert answer.text == "10" and len(server.requests) == 2


def test_a_server_that_is_down_is_a_transport_failure():
    with serve(vllm_list) as server:
        url = server.base_url
    with pytest.raises(TransportFailure, match="APIConnectionError"):
        client(url, max_retries=1).complete_prompt(requests(1)[0])


@pytest.mark.parametrize("keep_alive", [True, False])
def test_connections_are_kept_alive_where_the_server_allows(keep_alive):
    # ThreadingHTTPServer serves each connection on a thread of its own (uniquely named), so the
    # threads that answered count the connections used.
    threads: list[str] = []

    def record(body):
        threads.append(threading.current_thread().name)
        return vllm_list(body)

    with serve(record, keep_alive=keep_alive) as server:
        door = client(server.base_url, concurrency=1, prompts_per_request=1)
        for _ in range(5):
            door.complete_prompts(requests(2))
    assert len(threads) == 10
    assert len(set(threads)) == (1 if keep_alive else 10)


@pytest.fixture(scope="module")
def tiny():
    tokenizer = mistral_style_tokenizer()
    return tokenizer, tiny_judge(tokenizer)


def test_the_probe_passes_a_server_that_answers_lists(tiny):
    tokenizer, model = tiny
    with serve(judge_handler(model, renderer="mistral")) as server:
        judge = ServedJudge(client(server.base_url, prompts_per_request=16), tokenizer=tokenizer)
        probe = judge.probe(number_probe())
    lists = [b for b in server.requests if isinstance(b["prompt"][0], list)]
    assert probe.mode == "exact" and len(lists) == 1 and len(lists[0]["prompt"]) == 2
    assert probe.requests == 4  # the root, the list of two, the first tokens


def test_the_probe_refuses_a_server_that_answers_lists_the_llamacpp_way(tiny):
    tokenizer, model = tiny
    with serve(judge_handler(model, server="llamacpp")) as server:
        # llama.cpp ignores the ids: a whole-vocabulary top-k reads the root exactly.
        whole = ExactSettings(top_logprobs=len(tokenizer))
        many = ServedJudge(
            client(server.base_url, prompts_per_request=16, max_retries=0),
            tokenizer=tokenizer,
            exact=whole,
        )
        with pytest.raises(LabError, match="prompts_per_request = 1") as caught:
            many.probe(number_probe())
        one = ServedJudge(
            client(server.base_url, prompts_per_request=1), tokenizer=tokenizer, exact=whole
        )
        assert one.probe(number_probe()).requests == 2  # no list asked of it
    assert "one choice each" in str(caught.value)


def test_the_probe_refuses_a_server_that_refuses_lists(tiny):
    tokenizer, model = tiny
    inner = judge_handler(model, renderer="mistral")

    def single_only(path, body):
        if isinstance(body.get("prompt", [None])[0], list):
            return 400, {"error": {"message": "prompt must be a list of integers"}}
        return inner.answer(path, body)

    with serve(Routed(single_only)) as server:
        judge = ServedJudge(client(server.base_url, prompts_per_request=8), tokenizer=tokenizer)
        with pytest.raises(LabError, match="prompts_per_request = 1") as caught:
            judge.probe(number_probe())
    assert "list of 2 token prompts" in str(caught.value)
    assert "prompt must be a list of integers" in str(caught.value)
