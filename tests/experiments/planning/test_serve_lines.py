"""`diarylab serve-lines DESIGN`: one `vllm serve` line per served model, made from the design
and its plan — its port, a context that holds the plan's longest sequence, the format flags and
reasoning parser the hardware table gives it, the log-probabilities its readings ask, prefix
caching and the tensor-parallel size that holds it — and the `hf download` lines each machine
needs."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from diarylab.experiments.cli import main

FULL = "experiments/designs/diary-full.toml"
MISTRAL = "mistralai/Mistral-Small-3.1-24B-Instruct-2503"


def commands(capsys, *args: str) -> list[list[str]]:
    """The printed lines as shell words, continuation lines joined, comments dropped."""
    assert main(["serve-lines", *args]) == 0
    text = capsys.readouterr().out.replace("\\\n", " ")
    return [shlex.split(line) for line in text.splitlines() if line and not line.startswith("#")]


def serves(lines: list[list[str]]) -> dict[str, dict[str, str]]:
    out = {}
    for words in lines:
        if words[:2] == ["$VLLM", "serve"]:
            flags = words[3:]
            out[words[2]] = {
                flag: (flags[i + 1] if i + 1 < len(flags) and not flags[i + 1].startswith("--")
                       else "")
                for i, flag in enumerate(flags) if flag.startswith("--")
            }  # fmt: skip
    return out


def gpu_models(capsys, *args: str) -> dict:
    assert main(["plan", *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)["gpu"]["models"]


def test_the_full_study_gets_one_serve_line_per_served_model(capsys):
    lines = commands(capsys, FULL)
    served = serves(lines)
    assert set(served) == {MISTRAL, "openai/gpt-oss-120b", "Qwen/Qwen3-32B"}
    models = gpu_models(capsys, FULL)
    who = {MISTRAL: "mistral-small-3.1", "openai/gpt-oss-120b": "gpt-oss-120b",
           "Qwen/Qwen3-32B": "open-qwen"}  # fmt: skip
    ports = {MISTRAL: "8000", "openai/gpt-oss-120b": "8001", "Qwen/Qwen3-32B": "8002"}
    for model, flags in served.items():
        m = models[who[model]]
        assert flags["--port"] == ports[model]
        assert int(flags["--max-model-len"]) >= m["longest_tokens"]
        assert flags["--tensor-parallel-size"] == str(m["gpus"])
        assert "--enable-prefix-caching" in flags
    assert served[MISTRAL]["--tokenizer-mode"] == "mistral"
    assert served[MISTRAL]["--config-format"] == served[MISTRAL]["--load-format"] == "mistral"
    assert served["Qwen/Qwen3-32B"]["--reasoning-parser"] == "qwen3"
    for judge in (MISTRAL, "openai/gpt-oss-120b"):
        assert "--reasoning-parser" not in served[judge]
        assert int(served[judge]["--max-logprobs"]) >= 20
    downloads = [w[2] for w in lines if w[:2] == ["hf", "download"]]
    for model in (MISTRAL, "openai/gpt-oss-120b", "Qwen/Qwen3-32B",
                  "meta-llama/Llama-3.1-8B-Instruct"):  # fmt: skip
        assert model in downloads, model
    mistral = next(w for w in lines if w[:3] == ["hf", "download", MISTRAL])
    assert mistral[3:] == ["--include", "params.json", "consolidated.safetensors", "tekken.json"]


def test_smaller_cards_split_the_judges(capsys):
    served = serves(commands(capsys, FULL, "--gpu", "L40S-48GB"))
    assert served[MISTRAL]["--tensor-parallel-size"] == "2"
    assert served["openai/gpt-oss-120b"]["--tensor-parallel-size"] == "2"


def test_a_top_k_judge_gets_the_logprobs_it_asks_and_a_chatbot_that_does_not_think_no_parser(
    tmp_path, capsys
):
    text = Path(FULL).read_text(encoding="utf-8")
    text = text.replace('thinking = "off"', 'thinking = "none"')
    text = text.replace('tokenizer = "openai/gpt-oss-120b"', 'mode = "top-k"\ntop_logprobs = 50')
    path = tmp_path / "design.toml"
    path.write_text(text)
    served = serves(commands(capsys, str(path)))
    assert served["openai/gpt-oss-120b"]["--max-logprobs"] == "50"
    assert "--reasoning-parser" not in served["Qwen/Qwen3-32B"]


@pytest.mark.parametrize("design", ["demo.toml", "benchmark-demo.toml"])
def test_a_design_with_nothing_served_prints_only_what_the_run_machine_needs(design, capsys):
    lines = commands(capsys, f"experiments/designs/{design}")
    assert not serves(lines)
