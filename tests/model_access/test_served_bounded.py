"""Bounded served readings (max_error, trie-v3) through litellm and real HTTP against the
vLLM-shaped stand-in, on the two test tokenizers (one digit per token; 0..999 as single tokens)
with a confident judge (testing/confident_judge.py) and tiny_judge's spread-out one: the exact
reading (max_error 0, the local judge's) must lie inside every stored bound, and a confident
judge is read in a handful of prompts. Also: prompts sent as lists, answered by choice index,
one broken choice asked again alone; replicas."""

from __future__ import annotations

from typing import Any

import pytest

from diarylab.model_access.served import ServedClient
from diarylab.model_access.settings import EndpointSettings
from diarylab.model_access.token_prompts import TokenPromptRequest
from diarylab.rubric.judging.local_judge import LocalJudge
from diarylab.rubric.judging.served_exact import ExactSettings
from diarylab.rubric.judging.served_judge import ServedJudge
from diarylab.rubric.prompts import JudgePrompt
from diarylab.testing.confident_judge import confident_judge
from diarylab.testing.fake_judge_server import judge_handler
from diarylab.testing.fake_openai import serve
from diarylab.testing.judge_tokenizers import (
    mistral_style_tokenizer,
    thousand_numbers_tokenizer,
    tiny_judge,
)

PROMPTS = [
    JudgePrompt.chat([{"role": "user", "content": text}], prefill="Score: ")
    for text in ("Rate the entry, 0 to 100.", "Dear diary, today I felt alone.", "Is this kind?")
]
TOKENIZERS = {
    "digits": (mistral_style_tokenizer, "mistral"),
    "thousand": (thousand_numbers_tokenizer, "trim"),
}
# Done-when of issue 22: prompts per 0–100 reading at max_error 0.05 on a confident judge.
MOST_PROMPTS = {"digits": 12, "thousand": 20}


def client(url: str | list[str], **settings: Any) -> ServedClient:
    endpoint = EndpointSettings(
        base_url=url, max_retries=settings.pop("max_retries", 0), **settings
    )
    return ServedClient("hosted_vllm/fake-judge", endpoint, sleep=lambda s: None)


@pytest.fixture(scope="module", params=list(TOKENIZERS))
def confident(request):
    make, renderer = TOKENIZERS[request.param]
    tokenizer = make()
    model = confident_judge(tokenizer)
    exact = [LocalJudge(model).read_number(p, floor=0.0) for p in PROMPTS]
    with serve(judge_handler(model, renderer=renderer)) as server:
        judge = ServedJudge(
            client(server.base_url), tokenizer=tokenizer, exact=ExactSettings(max_error=0.05)
        )
        bounded = [judge.read_number(p, floor=0.0) for p in PROMPTS]
    return request.param, exact, bounded, LocalJudge(model, max_error=0.05)


def test_a_confident_judge_is_read_in_a_dozen_prompts_with_the_exact_value_inside(confident):
    name, exact, bounded, _ = confident
    for full, reading in zip(exact, bounded, strict=True):
        bound = reading.bound
        assert bound is not None and bound.mean is not None
        assert reading.record["requests"] <= MOST_PROMPTS[name]
        # the stand-in's float32 log-probs against the local float64 sums: 1e-5 per probability
        assert bound.mean[0] - 1e-3 <= full.mean <= bound.mean[1] + 1e-3
        assert bound.coverage[0] - 1e-5 <= full.coverage <= bound.coverage[1] + 1e-5
        assert abs(reading.mean - full.mean) <= 0.05 + 1e-3
        assert reading.record["max_error"] == 0.05 and reading.record["algorithm"] == "trie-v3"
        assert reading.record["system_fingerprint"].startswith("vllm-")


def test_a_bounded_local_reading_is_inside_its_bound_too(confident):
    _, exact, _, local = confident
    for full, prompt in zip(exact, PROMPTS, strict=True):
        reading = local.read_number(prompt, floor=0.0)
        assert reading.bound.mean[0] - 1e-9 <= full.mean <= reading.bound.mean[1] + 1e-9
        assert reading.record["queried_nodes"] <= 12


def test_a_spread_out_judge_keeps_its_exact_value_inside_the_bound():
    # tiny_judge spreads its mass over all 101 numbers: a bounded reading saves less, and
    # must still hold the exact value.
    tokenizer = mistral_style_tokenizer()
    model = tiny_judge(tokenizer)
    full = LocalJudge(model).read_number(PROMPTS[0], floor=0.0)
    with serve(judge_handler(model, renderer="mistral")) as server:
        judge = ServedJudge(
            client(server.base_url), tokenizer=tokenizer, exact=ExactSettings(max_error=0.5)
        )
        reading = judge.read_number(PROMPTS[0], floor=0.0)
    assert reading.bound.mean[0] - 1e-3 <= full.mean <= reading.bound.mean[1] + 1e-3
    assert abs(reading.mean - full.mean) <= 0.5 + 1e-3
    assert not reading.exact and reading.bound.open_mass > 0


def test_prompts_go_as_lists_and_are_matched_by_choice_index():
    tokenizer = mistral_style_tokenizer()
    model = confident_judge(tokenizer)
    with serve(judge_handler(model, renderer="mistral")) as server:
        one = ServedJudge(client(server.base_url, prompts_per_request=1), tokenizer=tokenizer)
        single = one.read_number(PROMPTS[0], floor=0.0)
        before = len(server.requests)
        many = ServedJudge(client(server.base_url, prompts_per_request=64), tokenizer=tokenizer)
        batched = many.read_number(PROMPTS[0], floor=0.0)
        bodies = server.requests[before:]
    assert batched.distribution == pytest.approx(single.distribution, abs=1e-12)
    assert single.record["http_requests"] == single.record["requests"]
    assert batched.record["requests"] == single.record["requests"]
    assert batched.record["http_requests"] == len(bodies) < single.record["http_requests"] / 4
    assert max(len(b["prompt"]) for b in bodies if isinstance(b["prompt"][0], list)) <= 64


def test_one_broken_choice_is_asked_again_alone_and_the_others_are_kept():
    tokenizer = mistral_style_tokenizer()
    model = confident_judge(tokenizer)
    real = judge_handler(model, renderer="mistral")
    broken = {"done": False}

    def answer(path: str, body: dict[str, Any]):
        status, reply = real.answer(path, body)[:2]
        if isinstance(body.get("prompt", [0])[0], list) and not broken["done"]:
            broken["done"] = True
            reply["choices"][1]["logprobs"]["token_logprobs"] = []  # malformed for choice 1
        return status, reply

    from diarylab.testing.fake_openai import Routed

    prompts = [
        TokenPromptRequest.of(
            (1, 2, 3 + i),
            max_tokens=1,
            logprob_token_ids=(5, 6),
            extra_body={"return_token_ids": True},
        )
        for i in range(4)
    ]
    with serve(Routed(answer)) as server:
        c = client(server.base_url, prompts_per_request=4)
        answers, calls = c.complete_prompts_counted(prompts)
        bodies = list(server.requests)
    assert [a.prompt_token_ids for a in answers] == [p.prompt_ids for p in prompts]
    assert calls == 2 and len(bodies) == 2 and bodies[1]["prompt"] == [1, 2, 4]


def test_a_failing_replica_is_retried_on_the_next_and_counted():
    tokenizer = mistral_style_tokenizer()
    model = confident_judge(tokenizer)
    with serve(judge_handler(model, renderer="mistral")) as good:
        dead = "http://127.0.0.1:9/v1"  # nothing listens there
        c = client([dead, good.base_url], max_retries=2, backoff_s=0)
        judge = ServedJudge(c, tokenizer=tokenizer, exact=ExactSettings(max_error=0.05))
        reading = judge.read_number(PROMPTS[0], floor=0.0)
        served = len(good.requests)
    stats = c.replicas.stats()
    assert reading.readable and served == reading.record["http_requests"]
    assert stats["failures"].get(dead, 0) >= 1 and stats["failovers"] >= 1
    assert stats["tries"][good.base_url] == served


@pytest.mark.parametrize("name", list(TOKENIZERS))
def test_readings_walked_in_step_equal_each_read_alone_in_fewer_requests(name):
    make, renderer = TOKENIZERS[name]
    tokenizer = make()
    model = confident_judge(tokenizer)
    prompts = [
        JudgePrompt.chat([{"role": "user", "content": f"Entry {i}: {text}"}], prefill="Score: ")
        for i in range(6)
        for text in ("I stayed in again.", "Nobody called today.")
    ]
    with serve(judge_handler(model, renderer=renderer)) as server:

        def judge() -> ServedJudge:
            door = client(server.base_url, prompts_per_request=16, concurrency=4)
            return ServedJudge(door, tokenizer=tokenizer, exact=ExactSettings(max_error=0.05))

        alone = [judge().number_record(p) for p in prompts]
        sent_alone = len(server.requests)
        together = judge().records("number", prompts)
        sent_together = len(server.requests) - sent_alone
    volatile = ("requests", "http_requests")
    for one, many in zip(alone, together, strict=True):
        assert {k: v for k, v in many.items() if k not in volatile} == {
            k: v for k, v in one.items() if k not in volatile
        }
        assert many["requests"] == one["requests"]  # the same prompts, each read as alone
    assert sent_together < sent_alone / 3
    # every reading's share of the HTTP requests, summed, is the requests sent
    assert sum(r["http_requests"] for r in together) == pytest.approx(sent_together, abs=1e-4)
