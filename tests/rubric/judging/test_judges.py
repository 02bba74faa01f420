"""Judge specs (from a design or the command line), building judges, and identities."""

from __future__ import annotations

import pytest

from diarylab.foundation.errors import LabError
from diarylab.model_access.settings import EndpointSettings
from diarylab.rubric.judging.building import build_judge, default_load_local
from diarylab.rubric.judging.judges import ServedJudgeSpec
from diarylab.rubric.judging.local_judge import LocalJudge
from diarylab.rubric.judging.named_judge import judge_spec
from diarylab.rubric.judging.served_judge import ServedJudge
from diarylab.rubric.prompts import JudgePrompt
from diarylab.testing.judge_helpers import single_token_model

PROMPT = JudgePrompt.chat([{"role": "user", "content": "Rate it."}], prefill="Score: ")


def make_judge(name, **kw):
    return build_judge(judge_spec(name, **kw), default_load_local)


def test_served_spec_and_identity_without_transport_settings():
    endpoint = EndpointSettings(
        base_url="http://127.0.0.1:9/v1", api_key_env="SOME_KEY", timeout_s=3, concurrency=7
    )
    judge = make_judge("litellm:hosted_vllm/some/judge", endpoint=endpoint)
    assert isinstance(judge, ServedJudge)
    assert judge.client.settings is endpoint  # the very settings object, not a copy
    assert judge.batch_size == 7
    identity = judge.identity()
    assert identity["model"] == "hosted_vllm/some/judge" and identity["kind"] == "served"
    assert "127.0.0.1" not in str(identity) and "SOME_KEY" not in str(identity)


@pytest.mark.parametrize(
    "spec,kw,match",
    [
        ("", {}, "empty judge name"),
        ("litellm:", {}, "names no model"),
        ("not a model!", {}, "unknown model"),
        ("smollm2", {"endpoint": EndpointSettings(base_url="http://x")}, "for served judges"),
    ],
)
def test_spec_mistakes_are_lab_errors(spec, kw, match):
    with pytest.raises(LabError, match=match):
        make_judge(spec, **kw)


def test_local_judge_from_a_folder(tiny_model_folder):
    judge = make_judge(str(tiny_model_folder))
    assert isinstance(judge, LocalJudge)
    assert judge.identity()["tokenizer_sha256"]


def test_identity_depends_on_what_determines_the_answer(tiny_model):
    identity = LocalJudge(tiny_model).identity()
    assert identity == LocalJudge(tiny_model).identity()
    assert identity != LocalJudge(single_token_model()).identity()


def test_openai_compatible_judge_needs_a_base_url():
    from diarylab.foundation.datafiles import validate

    with pytest.raises(LabError, match="needs endpoint.base_url"):
        validate(
            ServedJudgeSpec, {"id": "j", "kind": "openai-compatible", "model": "x/y"}, "d.toml"
        )


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
