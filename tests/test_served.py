from __future__ import annotations

import pytest

from foundation.errors import LabError
from model_access.served import (
    Completion,
    CompletionRequest,
    ServedClient,
    TransportFailure,
)
from model_access.settings import EndpointSettings, GenerationSettings
from tests.fake_openai import chat_response, serve

MESSAGES = [{"role": "user", "content": "Dear diary"}]


def client(url: str, **kw) -> ServedClient:
    settings = EndpointSettings(base_url=url, max_retries=3, backoff_s=0, **kw)
    return ServedClient("openai/fake-model", settings, sleep=lambda s: None)


def test_completion_text_and_logprobs_round_trip():
    top = [{"token": "4", "logprob": -0.1, "bytes": None}, {"token": "5", "logprob": -2.5}]
    lp = [{"token": "4", "logprob": -0.1, "top_logprobs": top}]

    with serve(lambda req: (200, chat_response("4", logprobs=lp))) as server:
        out = client(server.base_url).complete(
            CompletionRequest.of(
                MESSAGES,
                generation=GenerationSettings(max_new_tokens=1),
                top_logprobs=5,
                extra_body={"continue_final_message": True},
            )
        )
    assert out.text == "4"
    assert out.logprobs and out.logprobs[0].top == (("4", -0.1), ("5", -2.5))
    sent = server.requests[0]
    assert sent["logprobs"] is True and sent["top_logprobs"] == 5
    assert sent["continue_final_message"] is True
    assert sent.get("stream") in (None, False)
    assert Completion.from_record(out.to_record()) == out


def test_empty_body_is_retried_and_never_returned():
    answers = [
        (200, chat_response(None, finish_reason=None)),
        (200, {"choices": []}),
        (200, chat_response("a real reply")),
    ]
    with serve(lambda req: answers.pop(0)) as server:
        out = client(server.base_url).complete(
            CompletionRequest.of(MESSAGES, generation=GenerationSettings(max_new_tokens=20))
        )
    assert out.text == "a real reply"
    assert len(server.requests) == 3


def test_server_errors_are_retried_then_fail_clearly():
    with serve(lambda req: (503, {"error": {"message": "overloaded"}})) as server:
        with pytest.raises(TransportFailure, match="re-running resumes"):
            client(server.base_url).complete(
                CompletionRequest.of(MESSAGES, generation=GenerationSettings(max_new_tokens=5))
            )
    assert len(server.requests) == 4


def test_refusal_is_returned_and_flagged():
    body = chat_response("I can't help with that.", finish_reason="content_filter")
    with serve(lambda req: (200, body)) as server:
        out = client(server.base_url).complete(
            CompletionRequest.of(MESSAGES, generation=GenerationSettings(max_new_tokens=5))
        )
    assert out.refusal and out.text == "I can't help with that."


def test_key_comes_from_the_environment(monkeypatch):
    monkeypatch.setenv("FAKE_KEY_FOR_TEST", "sk-secret-123")
    with serve(lambda req: (200, chat_response("ok"))) as server:
        out = client(server.base_url, api_key_env="FAKE_KEY_FOR_TEST").complete(
            CompletionRequest.of(MESSAGES, generation=GenerationSettings(max_new_tokens=5))
        )
    headers = {k.lower(): v for k, v in server.headers[0].items()}
    assert headers.get("authorization") == "Bearer sk-secret-123"
    assert "sk-secret" not in repr(out.to_record())


def test_missing_key_variable_is_a_clear_error(monkeypatch):
    monkeypatch.delenv("NOT_SET_KEY", raising=False)
    with pytest.raises(LabError, match="NOT_SET_KEY"):
        client("http://127.0.0.1:9/v1", api_key_env="NOT_SET_KEY").complete(
            CompletionRequest.of(MESSAGES, generation=GenerationSettings(max_new_tokens=5))
        )


def test_auth_error_is_not_retried():
    with serve(lambda req: (401, {"error": {"message": "bad key"}})) as server:
        with pytest.raises(LabError, match="refused"):
            client(server.base_url).complete(
                CompletionRequest.of(MESSAGES, generation=GenerationSettings(max_new_tokens=5))
            )
    assert len(server.requests) == 1


def test_cache_key_leaves_out_transport_settings():
    a = CompletionRequest.of(MESSAGES, generation=GenerationSettings(max_new_tokens=5), seed=1)
    assert (
        a.key_fields()
        == CompletionRequest.of(
            MESSAGES, generation=GenerationSettings(max_new_tokens=5), seed=1
        ).key_fields()
    )
    assert "api_base" not in a.key_fields() and "timeout" not in str(a.key_fields())


def test_complete_many_keeps_order():
    with serve(lambda req: (200, chat_response(req["messages"][0]["content"].upper()))) as server:
        outs = client(server.base_url, concurrency=3).complete_many(
            [
                CompletionRequest.of(
                    [{"role": "user", "content": f"m{i}"}],
                    generation=GenerationSettings(max_new_tokens=3),
                )
                for i in range(6)
            ]
        )
    assert [o.text for o in outs] == [f"M{i}" for i in range(6)]
