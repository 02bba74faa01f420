"""A tiny diary run whose chatbot and judge are a real vLLM server (the `vllm` tier): it runs
through the command line, is killed with SIGKILL partway and resumed, and ends with the store of
an unbroken run. The diarist is the tiny random Llama (local, fast); the chatbot and the judge
are SmolLM2 on vLLM. Kept small on purpose: one diarist, two entries, coherence only, and the
judge's trie cut at node_cutoff (each exact 0–100 reading is otherwise ~300 requests)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from diarylab.testing.kill_resume import finish, kill_once_partway
from diarylab.testing.lab_fixtures import design_text, make_profile
from diarylab.testing.stores import close, snapshot

pytestmark = pytest.mark.vllm

CHATBOT = """
[[chatbots]]
id = "vllm-chat"
kind = "litellm"
model = "{model}"
generation = {{ max_new_tokens = 12, temperature = 0.7 }}
endpoint = {{ base_url = "{url}", concurrency = 4, max_retries = 2 }}
"""
JUDGE = """
[[judges]]
id = "vllm-judge"
kind = "openai-compatible"
model = "{model}"
tokenizer = "{tokenizer}"
node_cutoff = 0.001
endpoint = {{ base_url = "{url}", concurrency = 8, max_retries = 2 }}
"""
# An unsteered local chatbot on the vLLM engine, with the diarist's vLLM settings (one worker).
LOCAL_ON_VLLM = """
[[chatbots]]
id = "smol-chat"
kind = "local"
model = "{}"
generation = {{ max_new_tokens = 8, temperature = 0.7 }}
engine = "vllm"
vllm = {{ max_model_len = 2048, block_size = 32 }}
"""


def design(folder: Path, tiny_model_folder: Path, server) -> Path:
    text = design_text(
        tiny_model_folder,
        None,
        entries=2,
        diarists='["amara"]',
        chatbots=CHATBOT.format(model=server.litellm_model, url=server.base_url),
        judges=JUDGE.format(
            model=server.litellm_model, tokenizer=server.model_folder, url=server.base_url
        ),
    )
    text = text.replace('baseline_chatbot = "thanks"', 'baseline_chatbot = "vllm-chat"')
    text = text.replace('entry = ["pattern", "coherence", "realism"]', 'entry = ["coherence"]')
    path = folder / "design.toml"
    path.write_text(text)
    return path


def tables(folder: Path) -> dict[str, list[tuple]]:
    return snapshot(folder, ("entries", "replies", "judgments"))


def test_a_vllm_run_killed_partway_resumes_to_the_same_store(
    vllm_server, tiny_model_folder, tmp_path
):
    path = design(tmp_path, tiny_model_folder, vllm_server)
    reference = tmp_path / "reference"
    finish(path, reference, timeout_s=600)
    expected = tables(reference)
    assert expected["entries"] and expected["replies"] and expected["judgments"]
    served = {c[2] for c in expected["calls"]}  # the model column holds the caller's id
    assert {"vllm-chat", "vllm-judge"} <= served, served

    broken = tmp_path / "broken"
    total = len(expected["calls"])
    kill_once_partway(path, broken, total, (0.5, 0.3, 0.15), poll_s=0.05)
    finish(path, broken, timeout_s=600)
    got = tables(broken)
    assert [c[:4] for c in got["calls"]] == [c[:4] for c in expected["calls"]]  # keys, requests
    for name in ("entries", "replies"):
        assert got[name] == expected[name]  # texts: exactly
    assert close(got["judgments"], expected["judgments"], "judgments") == []
    assert close([c[4] for c in got["calls"]], [c[4] for c in expected["calls"]], "calls") == []
    assert "model calls made 0" in finish(path, broken, timeout_s=300)


def test_a_run_with_the_vllm_diarist_engine_resumes_to_the_same_store(
    smollm2_folder, tiny_model_folder, tmp_path, monkeypatch
):
    """engine = "vllm": SmolLM2 writes on a vLLM worker, steered and unsteered rows in one
    batch, sampled with per-row seeds, and a local SmolLM2 chatbot answers on the same worker;
    the judge is the tiny local model, so every number is the lab's own and the store must be
    identical."""
    # Each worker start compiles for 68-88 s on these CPUs and this test starts three (the
    # unbroken run, the killed one, its resume): the steered class runs eager here, 12-13 s a
    # start. What it checks is resuming; the compiled steered model is held token-identical to
    # transformers in tests/model_access/test_vllm_engine.py. Every run of the test reads the same
    # variable.
    monkeypatch.setenv("DIARYLAB_VLLM_VARIANT", "eager")
    profile = make_profile(tmp_path, smollm2_folder)
    text = design_text(
        smollm2_folder,
        profile,
        entries=2,
        diarists='["amara"]',
        chatbots='[[chatbots]]\nid = "thanks"\nkind = "fixed"\n'
        + LOCAL_ON_VLLM.format(smollm2_folder),
        judges=f'[[judges]]\nid = "tiny-judge"\nkind = "local"\nmodel = "{tiny_model_folder}"\n',
    )
    text = text.replace(
        "local = { batch_size = 3 }",
        'local = { batch_size = 3 }\nengine = "vllm"\n'
        "vllm = { max_model_len = 2048, block_size = 32 }",
    )
    text = text.replace('entry = ["pattern", "coherence", "realism"]', 'entry = ["coherence"]')
    path = tmp_path / "design.toml"
    path.write_text(text)
    reference = tmp_path / "reference"
    finish(path, reference, timeout_s=600)
    expected = tables(reference)
    entries = expected["entries"]
    assert len(entries) == 6 and all(e for e in entries)  # entry 1 once, entry 2 per chatbot
    keys = [json.loads(c[3]) for c in expected["calls"] if c[1] == "diarist"]
    assert all(k["generation"]["engine"]["name"] == "vllm" for k in keys)
    assert {k["steer"] is None for k in keys} == {True, False}  # steered and unsteered rows
    replies = [json.loads(c[3]) for c in expected["calls"] if c[2] == "smol-chat"]
    assert replies and all(r["generation"]["engine"]["name"] == "vllm" for r in replies)

    broken = tmp_path / "broken"
    kill_once_partway(path, broken, len(expected["calls"]), (0.4, 0.2), poll_s=0.05)
    finish(path, broken, timeout_s=600)
    assert tables(broken) == expected
