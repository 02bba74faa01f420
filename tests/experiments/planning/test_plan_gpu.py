"""The plan's GPU part: per model the tokens it is asked, the GPUs of a named kind that hold
it, GPU-hours by phase and API dollars, each labelled with where it comes from; a measured or
given rate replaces the estimate by the rule it states. (The tokens are held against a real
server's own counters in tests/experiments/planning/test_vllm_plan_tokens.py.)"""

from __future__ import annotations

import contextlib
import functools
import io
import json

import pytest

from diarylab.experiments.cli import main
from diarylab.experiments.planning.hardware import load_hardware

FULL = "experiments/designs/diary-full.toml"
FRIENDS = "experiments/designs/friends.toml"


def _plan(capsys, *args: str) -> dict:
    """`plan ARGS --json`, worked out once per ARGS in this module (a copy each time)."""
    return json.loads(_planned(args))


@functools.cache
def _planned(args: tuple[str, ...]) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["plan", *args, "--json"]) == 0
    return out.getvalue()


@pytest.mark.parametrize("path", [FULL, FRIENDS])
def test_every_model_has_tokens_gpus_and_hours_on_an_h100(path, capsys):
    plan = _plan(capsys, path)
    gpu = plan["gpu"]
    assert gpu["gpu"] == "H100-80GB" and gpu["estimate"] is True
    models = gpu["models"]
    served = {w: m for w, m in models.items() if m["where"] != "api"}
    assert set(plan["requests"]) <= set(served) and "diarist" in served
    for who, m in served.items():
        assert m["gpus"] >= 1, who
        assert m["gpu_hours"] > 0 and m["basis"].startswith("estimate"), who
        assert m["prompt_tokens"] > m["cached_tokens"] >= 0, who
        assert m["gpu_hours"] == pytest.approx(sum(p["gpu_hours"] for p in m["by_phase"].values()))
    assert gpu["gpu_hours"] == pytest.approx(sum(m["gpu_hours"] for m in served.values()))
    assert gpu["gpus_at_once"] == sum(m["gpus"] for m in served.values())
    # a judge is asked the prompts its part of the plan counts, one token generated each
    for judge, cost in plan["requests"].items():
        assert models[judge]["requests"] == pytest.approx(cost["expected"])
        assert models[judge]["generated_tokens_at_most"] == pytest.approx(cost["expected"])
    assert any("nvidia.com" in s for s in gpu["sources"])
    for who, m in served.items():
        size = load_hardware().model(m["model"])
        assert size is not None and any(size.source in s for s in gpu["sources"]), who


def test_the_full_study_prices_its_api_chatbots_and_counts_every_reply(capsys):
    plan = _plan(capsys, FULL)
    models = plan["gpu"]["models"]
    replies = {t["what"].removeprefix("replies by "): t["count"] for t in plan["texts"]}
    for bot in ("frontier-a", "frontier-b"):
        assert models[bot]["requests"] == replies[bot]
        assert models[bot]["generated_tokens_at_most"] == replies[bot] * 600
    # the self-hosted chatbot is probed first: one short reply of 8 tokens (checks/probes.py)
    assert models["open-qwen"]["requests"] == replies["open-qwen"] + 1
    assert models["open-qwen"]["generated_tokens_at_most"] == replies["open-qwen"] * 600 + 8
    for bot in ("frontier-a", "frontier-b"):
        m = models[bot]
        assert m["where"] == "api" and m["gpus"] is None and m["dollars"] > 0
        assert "litellm" in m["note"] and "estimate" in m["note"]
    assert plan["gpu"]["api_dollars"] == pytest.approx(
        models["frontier-a"]["dollars"] + models["frontier-b"]["dollars"]
    )
    # a served chatbot's turns after the first find the conversation so far cached
    assert models["open-qwen"]["cached_tokens"] > 0
    assert models["frontier-a"]["cached_tokens"] == 0


def test_a_given_throughput_and_a_measured_rate_replace_the_estimate(capsys):
    base = _plan(capsys, FRIENDS)["gpu"]["models"]["mistral-small-3.1"]
    given = _plan(capsys, FRIENDS, "--throughput", "mistral-small-3.1=20000,500")
    m = given["gpu"]["models"]["mistral-small-3.1"]
    computed = m["prompt_tokens"] - m["cached_tokens"]
    hours = (computed / 20000 + m["generated_tokens_at_most"] / 500) / 3600
    assert m["gpu_hours"] == pytest.approx(hours) and "--throughput" in m["basis"]
    assert m["gpu_hours"] != pytest.approx(base["gpu_hours"])
    rated = _plan(capsys, FRIENDS, "--rate", "mistral-small-3.1=40")
    m = rated["gpu"]["models"]["mistral-small-3.1"]
    assert m["basis"].startswith("measured")
    assert m["gpu_hours"] == pytest.approx(m["requests"] / 40 * m["gpus"] / 3600)


def test_a_smaller_card_needs_more_of_them(capsys):
    h100 = _plan(capsys, FULL)["gpu"]["models"]
    l40s = _plan(capsys, FULL, "--gpu", "L40S-48GB")["gpu"]["models"]
    for who in ("mistral-small-3.1", "gpt-oss-120b", "open-qwen"):
        assert l40s[who]["gpus"] >= h100[who]["gpus"], who
        assert l40s[who]["gpu_hours"] > h100[who]["gpu_hours"], who
    # 48 GB holds neither judge's weights (48 and 65 GB) with the room vLLM leaves
    assert l40s["mistral-small-3.1"]["gpus"] == l40s["gpt-oss-120b"]["gpus"] == 2


def test_the_text_plan_says_hours_gpus_dollars_and_sources(capsys):
    assert main(["plan", FULL]) == 0
    out = capsys.readouterr().out
    assert "GPU-hours in all:" in out and "an estimate" in out
    assert "GPUs to hold every model at once:" in out
    assert "API dollars in all: $" in out
    assert "sources:" in out and "nvidia.com" in out


@pytest.mark.parametrize(
    ("args", "where"),
    [
        (["--gpu", "B200"], "--gpu"),
        (["--throughput", "gpt-oss-120b=1000"], "--throughput gpt-oss-120b"),
        (["--throughput", "nobody=1,2"], "--throughput"),
    ],
)
def test_a_bad_gpu_option_is_one_line_and_exit_2(args, where, capsys):
    assert main(["plan", FULL, *args]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and where in err[0] and "fix:" in err[0]


def test_a_model_the_table_lacks_says_how_to_give_its_rate(capsys):
    plan = _plan(capsys, "experiments/designs/demo.toml")
    diarist = plan["gpu"]["models"]["diarist"]
    assert diarist["gpu_hours"] is None and diarist["gpus"] is None
    assert "hardware.toml" in diarist["note"] and "--rate diarist=" in diarist["note"]
    assert plan["gpu"]["gpu_hours"] is None
