"""A benchmark design on the synthetic MentalHealthBench file, with its loopback servers: an API
chatbot whose first answer is a refusal and second empty, and a served judge that writes JSON
answers and reads log-probabilities from the tiny model."""

from __future__ import annotations

import json
import os
import textwrap
import zlib
from pathlib import Path

import pytest

from diarylab.testing.fake_judge_server import judge_handler
from diarylab.testing.fake_openai import Routed, chat_response, serve

# the synthetic benchmark file the tests keep (tests/data/); this package sits beside tests/
DATA = Path(__file__).resolve().parents[1] / "tests" / "data" / "mentalhealthbench_synthetic.jsonl"


def chat_handler():
    """An API chatbot: its first answer a refusal, its second empty, then short answers."""
    answers = iter(["I'm sorry, but I can't help with that.", ""])

    def handle(body):
        text = next(answers, "That sounds hard. Can you tell me more about what happened?")
        return 200, chat_response(text)

    return handle


def scripted_judge(tiny_model):
    """Writing requests (no log-probabilities asked) get a JSON answer that depends on the
    criterion; reading requests get real log-probabilities from the tiny model."""
    reader = judge_handler(tiny_model, mode="vllm")

    def handle(path, body):
        if body.get("logprobs") or "messages" not in body:  # exact reads go to /v1/completions
            return reader.answer(path, body)
        prompt = body["messages"][-1]["content"]
        met = zlib.crc32(prompt.encode()) % 2 == 0
        text = json.dumps({"explanation": "Checked the reply.", "criteria_met": met})
        return 200, chat_response(text)

    return Routed(handle)


def design(
    folder: Path,
    model: Path,
    chat_url: str,
    judge_url: str,
    *,
    sample: int = 6,
    local_judge: bool = False,
    retries: int = 1,
) -> Path:
    judges = f"""
[[judges]]
id = "served"
kind = "openai-compatible"
model = "openai/fake-judge"
tokenizer = "{model}"
probe_floor = 0.0
endpoint = {{ base_url = "{judge_url}", api_key_env = "DIARYLAB_TEST_KEY", concurrency = 8 }}
"""
    if local_judge:
        judges = f"""
[[judges]]
id = "tiny-judge"
kind = "local"
model = "{model}"
"""
    path = folder / "bench.toml"
    path.write_text(
        textwrap.dedent(
            f"""
            [design]
            name = "bench-test"
            kind = "benchmark"
            seed = 5
            coverage_floor = 0.0

            [benchmark]
            data = "{os.path.relpath(DATA, folder)}"
            format = "mentalhealthbench"
            sample = {sample}
            grader = {{ generation = {{ max_new_tokens = 3 }}, retries = {retries} }}

            [benchmark.calibration]
            anchors = [
                {{ chatbot = "thanks", published = 0.05, se = 0.02, source = "test table 1" }},
                {{ chatbot = "api", published = 0.55, se = 0.02, source = "test table 1" }},
            ]

            [analysis]
            resamples = 200

            [[chatbots]]
            id = "thanks"
            kind = "fixed"

            [[chatbots]]
            id = "tiny"
            kind = "local"
            model = "{model}"
            generation = {{ max_new_tokens = 5 }}

            [[chatbots]]
            id = "api"
            kind = "litellm"
            model = "openai/fake-chat"
            endpoint = {{ base_url = "{chat_url}", api_key_env = "DIARYLAB_TEST_KEY" }}
            """
        )
        + judges
    )
    return path


@pytest.fixture()
def servers(tiny_model, monkeypatch):
    monkeypatch.setenv("DIARYLAB_TEST_KEY", "sk-test-not-a-real-key")
    with serve(chat_handler()) as chat, serve(scripted_judge(tiny_model)) as judge:
        yield chat, judge
