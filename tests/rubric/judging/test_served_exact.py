"""Exact served readings on tokenizers built in code, through litellm and real HTTP against the
vLLM- and llama.cpp-shaped stand-ins: one digit per token with a Mistral-style root space, single
tokens for 0..999 (more than 128 number-continuing ids) behind a trimming template, and a
harmony (gpt-oss) template that ignores prefills. Each exact reading must equal the local
judge's reading of the same tiny model; each chat fallback must say it is not exact."""

from __future__ import annotations

import pytest

from diarylab.foundation.errors import LabError
from diarylab.model_access.served import ServedClient
from diarylab.model_access.settings import EndpointSettings
from diarylab.rubric.judging.local_judge import LocalJudge
from diarylab.rubric.judging.served_exact import ExactSettings
from diarylab.rubric.judging.served_judge import ServedJudge
from diarylab.rubric.probe_prompt import number_probe
from diarylab.rubric.prompts import JudgePrompt
from diarylab.testing.fake_judge_server import judge_handler
from diarylab.testing.fake_openai import serve
from diarylab.testing.judge_tokenizers import (
    harmony_tokenizer,
    mistral_style_tokenizer,
    thousand_numbers_tokenizer,
    tiny_judge,
)

NUMBER = JudgePrompt.chat(
    [{"role": "user", "content": "Rate the entry, 0 to 100."}], prefill="Score: "
)
YES_NO = JudgePrompt.chat([{"role": "user", "content": "Is the writer lonely?"}], prefill="Answer:")
# The renderer each real server would use for such a model: mistral_common strips the prefill's
# space, a Llama-3-like template trims it, vLLM's harmony renderer ignores the prefill.
CASES = {
    "mistral": (mistral_style_tokenizer, "mistral"),
    "thousand": (thousand_numbers_tokenizer, "trim"),
    "harmony": (harmony_tokenizer, "harmony"),
}


def client(url: str, concurrency: int = 8, prompts_per_request: int = 16) -> ServedClient:
    settings = EndpointSettings(
        base_url=url,
        max_retries=0,
        concurrency=concurrency,
        prompts_per_request=prompts_per_request,
    )
    return ServedClient("hosted_vllm/fake-judge", settings, sleep=lambda s: None)


@pytest.fixture(scope="module", params=list(CASES))
def case(request):
    """Per tokenizer: the model, its local reading, and the served exact and chat readings
    (read once per module: the 0..999 tokenizers take about two thousand short requests)."""
    make, renderer = CASES[request.param]
    tokenizer = make()
    model = tiny_judge(tokenizer)
    local = LocalJudge(model).read_number(NUMBER, floor=0.0)
    with serve(judge_handler(model, renderer=renderer)) as server:
        exact = ServedJudge(client(server.base_url), tokenizer=tokenizer)
        reading = exact.read_number(NUMBER, floor=0.0)
        yes_no = exact.read_yes_no(YES_NO, floor=0.0)
        bodies = list(server.requests)
        chat_judge = ServedJudge(client(server.base_url), mode="top-k")
        chat = chat_judge.read_number(NUMBER, floor=0.0)
        probe = chat_judge.probe(number_probe())
    return {
        "name": request.param,
        "model": model,
        "local": local,
        "exact": reading,
        "yes_no": yes_no,
        "bodies": bodies,
        "chat": chat,
        "chat_probe": probe,
    }


def test_the_served_exact_reading_equals_the_local_one(case):
    local, served = case["local"], case["exact"]
    assert served.exact and served.record["mode"] == "exact"
    for a, b in zip(served.distribution, local.distribution, strict=True):
        assert abs(a - b) <= 1e-5
    assert served.coverage == pytest.approx(local.coverage, abs=1e-5)
    assert local.coverage > 0.05  # not a comparison of two near-zero vectors
    if served.mean is not None:
        assert served.mean == pytest.approx(local.mean, abs=1e-3)


def test_the_served_exact_yes_no_equals_the_local_one(case):
    local = LocalJudge(case["model"]).read_yes_no(YES_NO, floor=0.0)
    assert case["yes_no"].exact
    assert case["yes_no"].p_yes == pytest.approx(local.p_yes, abs=1e-6)
    assert case["yes_no"].coverage == pytest.approx(local.coverage, abs=1e-6)


def test_a_replys_yes_no_questions_go_in_one_list_each_read_as_if_alone():
    """Fifteen questions about one reply: one HTTP request carrying fifteen token prompts
    (prompts_per_request 16), each reading equal to the same question read alone."""
    tokenizer = mistral_style_tokenizer()
    model = tiny_judge(tokenizer)
    questions = [
        JudgePrompt.chat(
            [{"role": "user", "content": f"Reply: it gets easier. Question {k}: is it kind?"}],
            prefill="Answer:",
        )
        for k in range(15)
    ]
    with serve(judge_handler(model, renderer="mistral")) as server:
        judge = ServedJudge(client(server.base_url), tokenizer=tokenizer)
        together = judge.records("yes_no", questions)
        assert len(server.requests) == 1 and len(server.requests[0]["prompt"]) == 15
        alone = [judge.records("yes_no", [q])[0] for q in questions[:3]]
    assert all(r["exact"] and r["requests"] == 1 for r in together)
    assert sum(r["http_requests"] for r in together) == pytest.approx(1.0, abs=1e-4)
    for a, b in zip(together, alone, strict=False):
        assert a["yes"] == b["yes"] and a["no"] == b["no"]
        assert b["http_requests"] == 1


def test_no_request_asks_for_more_than_128_ids(case):
    sizes = [len(b.get("logprob_token_ids", [])) for b in case["bodies"]]
    assert max(sizes) <= 128
    if case["name"] != "mistral":
        # 0..999 as single tokens: a number node needs about a thousand ids, in blocks.
        per_prompt: dict[tuple[int, ...], int] = {}
        for body in case["bodies"]:
            listed = body["prompt"] if isinstance(body["prompt"][0], list) else [body["prompt"]]
            for prompt in listed:  # a list of prompts shares its ids
                key = tuple(prompt)
                per_prompt[key] = per_prompt.get(key, 0) + len(body["logprob_token_ids"])
        assert max(per_prompt.values()) > 1000


def test_the_harmony_prompt_ends_in_the_final_channel(case):
    tail = case["exact"].record["prompt_tail"]
    if case["name"] == "harmony":
        assert tail.endswith("<|start|>assistant<|channel|>final<|message|>Score: ")
        assert case["exact"].record["reasoning_effort"] == "low"
        assert case["exact"].record["form"] == "harmony"
    else:
        assert tail.endswith("Score: ")


def test_the_chat_fallback_says_it_is_not_exact(case):
    chat = case["chat"]
    assert not chat.exact and chat.record["mode"] == "top-k"
    assert 0 <= chat.coverage <= 1 and chat.record["first_tokens"]
    if case["name"] == "harmony":
        # The prefill became a finished message and a new turn opened: whatever the model writes
        # there, it is not the number after "Score: ", and the probe says so.
        assert case["chat_probe"].root_coverage < 0.9


def test_over_128_ids_in_one_request_is_refused_by_the_vllm_stand_in():
    tokenizer = thousand_numbers_tokenizer()
    model = tiny_judge(tokenizer)
    with serve(judge_handler(model)) as server:
        judge = ServedJudge(
            client(server.base_url), tokenizer=tokenizer, exact=ExactSettings(ids_per_request=500)
        )
        with pytest.raises(LabError, match="refused"):
            judge.read_number(NUMBER)


def test_llamacpp_ignored_ids_are_not_exact_and_a_whole_vocabulary_top_k_is():
    tokenizer = mistral_style_tokenizer()
    model = tiny_judge(tokenizer)
    local = LocalJudge(model).read_number(NUMBER, floor=0.0)
    with serve(judge_handler(model, server="llamacpp")) as server:
        ignored = ServedJudge(
            client(server.base_url, prompts_per_request=1),
            tokenizer=tokenizer,
            exact=ExactSettings(top_logprobs=5),
        ).read_number(NUMBER, floor=0.0)
        whole = ServedJudge(
            client(server.base_url, prompts_per_request=1),
            tokenizer=tokenizer,
            exact=ExactSettings(top_logprobs=len(tokenizer)),
        )
        before = len(server.requests)
        reading = whole.read_number(NUMBER, floor=0.0)
        asked = server.requests[before:]
        probe = whole.probe(number_probe())
    # The server answered without the asked ids: the record says so, whatever was asked.
    assert not ignored.exact and ignored.record["missing_ids"]
    assert ignored.coverage <= local.coverage + 1e-6
    assert reading.exact
    for a, b in zip(reading.distribution, local.distribution, strict=True):
        assert abs(a - b) <= 1e-5
    # One request per prompt is enough when the first block already brought everything back.
    assert len(asked) == len({tuple(b["prompt"]) for b in asked}) == reading.record["requests"]
    assert probe.mode == "exact"


def test_llamacpp_without_top_logprobs_names_the_fix():
    tokenizer = mistral_style_tokenizer()
    model = tiny_judge(tokenizer)
    with serve(judge_handler(model, server="llamacpp")) as server:
        judge = ServedJudge(client(server.base_url, prompts_per_request=1), tokenizer=tokenizer)
        with pytest.raises(LabError, match="top_logprobs to the vocabulary size"):
            judge.read_number(NUMBER)
