"""The served judge against a real vLLM server (the `vllm` tier, testing/vllm_server.py): an exact
reading through /v1/completions by prompt token ids equals the local reading of the same
weights, numbers and yes/no, also when the client renders with a template that trims the
prefill; and `diarylab judge probe` accepts the server. The local and the served model are both
SmolLM2-135M in float32, so the only differences left are the two runtimes' arithmetic."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from diarylab.model_access.served import ServedClient
from diarylab.model_access.settings import EndpointSettings
from diarylab.rubric.judging.judge_render import render_judge_prompt
from diarylab.rubric.judging.local_judge import LocalJudge
from diarylab.rubric.judging.served_exact import ExactSettings
from diarylab.rubric.judging.served_judge import ServedJudge
from diarylab.rubric.prompts import JudgePrompt
from diarylab.testing.fake_judge_render import trimming_template
from diarylab.testing.kill_resume import ROOT

pytestmark = pytest.mark.vllm

TOLERANCE = 1e-4
NUMBER = JudgePrompt.chat(
    [
        {
            "role": "user",
            "content": "How lonely is this diary entry, from 0 to 100? 'Nobody called again "
            "today. I ate dinner standing at the counter and went to bed at eight.'",
        }
    ],
    prefill="Score: ",
)
YES_NO = JudgePrompt.chat(
    [{"role": "user", "content": "Is the writer of 'Nobody called again today.' lonely?"}],
    prefill="Answer:",
)


def served(server, tokenizer, *, max_error: float = 0.0, per_request: int = 16) -> ServedJudge:
    settings = EndpointSettings(
        base_url=server.base_url, max_retries=2, concurrency=8, prompts_per_request=per_request
    )
    return ServedJudge(
        ServedClient(server.litellm_model, settings),
        tokenizer=tokenizer,
        exact=ExactSettings(max_error=max_error),
    )


@pytest.fixture(scope="module")
def exact_number(vllm_server, shipped_tokenizer):
    """One exact served 0–100 reading (~300 prompts), shared by the tests that compare to it."""
    return served(vllm_server, shipped_tokenizer).read_number(NUMBER, floor=0.0)


@pytest.fixture(scope="module")
def trimming(shipped_tokenizer, tmp_path_factory):
    """The SmolLM2 tokenizer with every message's content piped through `| trim` (as Llama-3's
    and Gemma's templates do): the prefill's trailing space is lost and must be put back."""
    from transformers import AutoTokenizer

    folder = tmp_path_factory.mktemp("smollm2-trim")
    shipped_tokenizer.save_pretrained(folder)
    tokenizer = AutoTokenizer.from_pretrained(folder)
    tokenizer.chat_template = trimming_template(shipped_tokenizer.chat_template)
    return tokenizer


def assert_same_number(served_reading, local_reading) -> None:
    assert served_reading.exact and served_reading.record["mode"] == "exact"
    assert served_reading.record["requests"] > 100  # every node of a one-digit-per-token trie
    worst = max(
        abs(a - b)
        for a, b in zip(served_reading.distribution, local_reading.distribution, strict=True)
    )
    assert worst <= TOLERANCE, worst
    assert served_reading.coverage == pytest.approx(local_reading.coverage, abs=TOLERANCE)
    assert served_reading.mean == pytest.approx(local_reading.mean, abs=0.05)
    assert local_reading.coverage > 0.05  # not a comparison of two near-zero vectors


def test_an_exact_number_reading_equals_the_local_one(exact_number, smollm2):
    local = LocalJudge(smollm2).read_number(NUMBER, floor=0.0)
    assert_same_number(exact_number, local)


@pytest.mark.parametrize("max_error", [0.05, 1.0])
def test_a_bounded_reading_holds_the_exact_value(
    vllm_server, shipped_tokenizer, exact_number, max_error
):
    """SmolLM2 spreads its mass over many numbers, so a bounded reading saves less than on a
    confident judge; what it must do is hold the exact value inside its bound, within
    max_error of it, with fewer prompts."""
    reading = served(vllm_server, shipped_tokenizer, max_error=max_error).read_number(
        NUMBER, floor=0.0
    )
    bound = reading.bound
    assert bound is not None and bound.mean is not None
    assert bound.mean[0] - TOLERANCE <= exact_number.mean <= bound.mean[1] + TOLERANCE
    assert bound.coverage[0] - TOLERANCE <= exact_number.coverage <= bound.coverage[1] + TOLERANCE
    assert abs(reading.mean - exact_number.mean) <= max_error + TOLERANCE
    assert reading.record["requests"] < exact_number.record["requests"]
    assert reading.record["max_error"] == max_error


def test_prompt_lists_read_what_single_prompts_read(vllm_server, shipped_tokenizer):
    """The same bounded reading with one prompt per request and with lists of 16: the real
    server answers a list's choices by index, so the numbers agree and fewer requests go."""
    one = served(vllm_server, shipped_tokenizer, max_error=1.0, per_request=1)
    many = served(vllm_server, shipped_tokenizer, max_error=1.0, per_request=16)
    a, b = (judge.read_number(NUMBER, floor=0.0) for judge in (one, many))
    assert a.record["requests"] == b.record["requests"]  # the same prompts
    assert a.record["http_requests"] == a.record["requests"]
    assert b.record["http_requests"] < a.record["http_requests"]
    worst = max(abs(x - y) for x, y in zip(a.distribution, b.distribution, strict=True))
    assert worst <= TOLERANCE, worst


def test_a_trimming_template_is_repaired_and_reads_the_same(
    vllm_server, shipped_tokenizer, trimming
):
    plain = render_judge_prompt(shipped_tokenizer, NUMBER).text
    trimmed = trimming.apply_chat_template(
        NUMBER.chat_messages(), tokenize=False, continue_final_message=True
    )
    assert not trimmed.endswith(" ") and plain.endswith("Score: ")  # the template did trim
    assert render_judge_prompt(trimming, NUMBER).text == plain  # and the client repaired it
    # What the server read (it echoes the prompt ids) and P(a number starts) agree; the probe
    # reads the root only, a few requests instead of a whole trie.
    repaired = served(vllm_server, trimming).probe(NUMBER)
    reference = served(vllm_server, shipped_tokenizer).probe(NUMBER)
    assert repaired.mode == reference.mode == "exact"
    assert repaired.prompt_tail == reference.prompt_tail and repaired.prompt_tail.endswith(": ")
    assert repaired.root_coverage == pytest.approx(reference.root_coverage, abs=TOLERANCE)
    assert reference.root_coverage > 0.5


def test_an_exact_yes_no_reading_equals_the_local_one(vllm_server, smollm2, shipped_tokenizer):
    local = LocalJudge(smollm2).read_yes_no(YES_NO, floor=0.0)
    reading = served(vllm_server, shipped_tokenizer).read_yes_no(YES_NO, floor=0.0)
    assert reading.record["mode"] == "exact"
    assert reading.p_yes == pytest.approx(local.p_yes, abs=TOLERANCE)
    assert reading.coverage == pytest.approx(local.coverage, abs=TOLERANCE)
    assert local.coverage > 0.05


def test_the_probe_accepts_the_server(vllm_server, smollm2, smollm2_folder):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "diarylab.experiments.cli",
            "judge",
            "probe",
            "--judge",
            f"litellm:{vllm_server.litellm_model}",
            "--base-url",
            vllm_server.base_url,
            "--tokenizer",
            str(smollm2_folder),
            "--json",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    probe = json.loads(done.stdout)
    assert probe["mode"] == "exact" and probe["asked_mode"] == "exact"
    assert probe["verdict"] == "ok", probe
    assert probe["first_tokens"]  # what the server wrote, shown to the user
