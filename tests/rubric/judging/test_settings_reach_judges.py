"""A judge's own settings arrive where they act: a served judge's reading options reach its
reader and its identity, transport options reach its client and never the identity
(tests/test_settings_proofs.py names these tests as the fields' proofs)."""

from __future__ import annotations

from diarylab.foundation.datafiles import validate
from diarylab.model_access.shared_models import LocalModels
from diarylab.rubric.judging.judges import ServedJudgeSpec


def test_served_judge_options_reach_the_judge():
    from diarylab.rubric.judging.building import build_judge

    exact = validate(
        ServedJudgeSpec,
        {
            "id": "j",
            "kind": "litellm",
            "model": "openai/j",
            "tokenizer": "smollm2",
            "reasoning_effort": "high",
            "top_logprobs": 7,
            "ids_per_request": 50,
            "node_cutoff": 0.001,
        },
        "t",
    )
    judge = build_judge(exact, LocalModels().get)
    assert judge.mode == "exact" and judge.tokenizer is not None
    e = judge.exact_settings
    assert (e.reasoning_effort, e.top_logprobs, e.ids_per_request, e.node_cutoff) == (
        "high",
        7,
        50,
        0.001,
    )
    assert judge.identity()["reasoning_effort"] == "high"
    chat = validate(
        ServedJudgeSpec,
        {
            "id": "j",
            "kind": "litellm",
            "model": "openai/j",
            "tokenizer": "smollm2",
            "mode": "top-k",
            "prefill": False,
            "expand_floor": 0.01,
            "top_logprobs": 9,
        },
        "t",
    )
    judge = build_judge(chat, LocalModels().get)
    assert judge.mode == "top-k"
    c = judge.chat_settings
    assert (c.prefill, c.expand_floor, c.top_logprobs) == (False, 0.01, 9)
    assert judge.identity()["top_logprobs"] == 9


def test_max_error_and_scout_logprobs_reach_the_readers_and_the_identity(monkeypatch):
    """A judge's max_error (both kinds) and scout_logprobs reach the reader that uses them and
    the judge's identity (they change results); prompts_per_request and a list of base URLs
    reach the client and never the identity (transport)."""
    from diarylab.rubric.judging.building import build_judge
    from diarylab.rubric.judging.judges import LocalJudgeSpec

    spec = {
        "id": "j",
        "kind": "litellm",
        "model": "openai/j",
        "tokenizer": "smollm2",
        "max_error": 0.2,
        "scout_logprobs": 9,
    }
    two_urls = {"base_url": ["http://a/v1", "http://b/v1"], "prompts_per_request": 7}
    served = validate(ServedJudgeSpec, {**spec, "endpoint": two_urls}, "t")
    judge = build_judge(served, LocalModels().get)
    assert (judge.exact_settings.max_error, judge.exact_settings.scout_logprobs) == (0.2, 9)
    assert judge.identity()["max_error"] == 0.2 and judge.identity()["scout_logprobs"] == 9
    assert judge.client.settings.prompts_per_request == 7
    assert judge.client.replicas.urls == ("http://a/v1", "http://b/v1")
    one_url = {"base_url": "http://c/v1", "prompts_per_request": 1}
    other = validate(ServedJudgeSpec, {**spec, "endpoint": one_url}, "t")
    assert build_judge(other, LocalModels().get).identity() == judge.identity()
    assert ServedJudgeSpec.model_fields["max_error"].default == 0.05
    local = validate(
        LocalJudgeSpec, {"id": "l", "kind": "local", "model": "m", "max_error": 0.3}, "t"
    )
    seen = {}

    class Model:
        def info(self):
            raise AssertionError("not needed")

    built = build_judge(local, lambda spec, settings: seen.setdefault("m", Model()))
    assert built.max_error == 0.3
