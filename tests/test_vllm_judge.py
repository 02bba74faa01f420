"""The served judge against a real vLLM server (the `vllm` tier, tests/vllm_server.py): an exact
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

from model_access.served import ServedClient
from model_access.settings import EndpointSettings
from rubric.judge_render import render_judge_prompt
from rubric.local_judge import LocalJudge
from rubric.prompts import JudgePrompt
from rubric.served_judge import ServedJudge
from tests.fake_judge_render import trimming_template
from tests.kill_resume import ROOT

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


def served(server, tokenizer) -> ServedJudge:
    settings = EndpointSettings(base_url=server.base_url, max_retries=2, concurrency=8)
    return ServedJudge(ServedClient(server.litellm_model, settings), tokenizer=tokenizer)


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


def test_an_exact_number_reading_equals_the_local_one(vllm_server, smollm2, shipped_tokenizer):
    local = LocalJudge(smollm2).read_number(NUMBER, floor=0.0)
    assert_same_number(served(vllm_server, shipped_tokenizer).read_number(NUMBER, floor=0.0), local)


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
            "experiments.cli",
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
