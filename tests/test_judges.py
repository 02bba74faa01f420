"""make_judge, judge identities, request keys and the record cache."""

from __future__ import annotations

import pytest

from foundation.errors import LabError
from rubric.judges import LocalJudge, MemoryCache, ServedJudge, make_judge
from rubric.prompts import JudgePrompt
from tests.judge_helpers import single_token_model

PROMPT = JudgePrompt.chat([{"role": "user", "content": "Rate it."}], prefill="Score: ")


def test_served_spec_and_identity_without_transport_settings():
    judge = make_judge(
        "litellm:hosted_vllm/some/judge", base_url="http://127.0.0.1:9/v1", api_key_env="SOME_KEY"
    )
    assert isinstance(judge, ServedJudge)
    identity = judge.identity()
    assert identity["model"] == "hosted_vllm/some/judge" and identity["kind"] == "served"
    assert "127.0.0.1" not in str(identity) and "SOME_KEY" not in str(identity)


@pytest.mark.parametrize(
    "spec,kw,match",
    [
        ("", {}, "empty judge spec"),
        ("litellm:", {}, "names no model"),
        ("not a model!", {}, "unknown model"),
        ("smollm2", {"base_url": "http://x"}, "for served judges"),
    ],
)
def test_spec_mistakes_are_lab_errors(spec, kw, match):
    with pytest.raises(LabError, match=match):
        make_judge(spec, **kw)


def test_local_judge_from_a_folder(tiny_model_folder):
    judge = make_judge(str(tiny_model_folder))
    assert isinstance(judge, LocalJudge)
    assert judge.identity()["tokenizer_sha256"]


def test_request_key_depends_on_what_determines_the_answer(tiny_model):
    judge = LocalJudge(tiny_model)
    key = judge.request_key(PROMPT, "number")
    assert key == LocalJudge(tiny_model).request_key(PROMPT, "number")
    assert key != judge.request_key(PROMPT, "yes_no")
    other = JudgePrompt.chat([{"role": "user", "content": "Rate it."}], prefill="Score:")
    assert key != judge.request_key(other, "number")
    assert key != LocalJudge(single_token_model()).request_key(PROMPT, "number")


def test_cache_answers_a_repeated_call_without_the_model(tiny_model, monkeypatch):
    cache = MemoryCache()
    judge = LocalJudge(tiny_model, cache=cache)
    first = judge.read_number(PROMPT, floor=0.0)
    assert len(cache.records) == 1

    def no_model(*args, **kwargs):
        raise AssertionError("the model was called for a cached request")

    monkeypatch.setattr(tiny_model, "next_token_logprobs", no_model)
    again = LocalJudge(tiny_model, cache=cache).read_number(PROMPT, floor=0.0)
    assert again.distribution == first.distribution and cache.hits == 1


def test_chat_prompt_keeps_the_prefill_trailing_space_when_the_template_trims():
    model = single_token_model()
    model.tokenizer.chat_template = (
        "{% for m in messages %}{{ m['role'] }}: {{ m['content'] | trim }}\n{% endfor %}"
    )
    text = LocalJudge(model).prompt_text(PROMPT)
    assert text.endswith("assistant: Score: ")
    reading = LocalJudge(model).read_number(PROMPT, floor=0.0)
    assert len(reading.distribution) == 101


def test_bad_floor_is_a_lab_error(tiny_model):
    with pytest.raises(LabError, match="floor"):
        LocalJudge(tiny_model).read_number(PROMPT, floor=1.5)
