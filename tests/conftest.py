"""Shared fixtures: the shipped tokenizer (loaded once per session) and a tiny random Llama
built from a config in code, so runtime tests take seconds."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

from diarylab.testing.tiny_models import SPLIT_MAP, TINY_SPEC, build_tiny_llama

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# The plan keeps judges' reading costs (experiments/planning/cost_cache.py): one folder for the
# session, not the user's cache, so that no test reads what an earlier session kept.
os.environ.setdefault("DIARYLAB_PLAN_COSTS", tempfile.mkdtemp(prefix="diarylab-plan-costs-"))


@pytest.fixture(scope="session")
def smollm2_folder() -> Path:
    from diarylab.model_access.embedded import embedded_model_folder

    return embedded_model_folder()


@pytest.fixture(scope="session")
def shipped_tokenizer(smollm2_folder):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(smollm2_folder)


@pytest.fixture(scope="session")
def tiny_model(shipped_tokenizer):
    from diarylab.model_access.local import LocalModel

    return LocalModel(build_tiny_llama(shipped_tokenizer), shipped_tokenizer, spec=TINY_SPEC)


@pytest.fixture(scope="session")
def tiny_model_folder(tmp_path_factory, tiny_model) -> Path:
    folder = tmp_path_factory.mktemp("tiny-llama")
    tiny_model.model.save_pretrained(folder)
    tiny_model.tokenizer.save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def tiny_ref(tiny_model_folder):
    """The tiny model loaded here and how a Ray actor loads its own copy (its ModelRef)."""
    from diarylab.model_access.local import LocalModel
    from diarylab.model_access.settings import LocalSettings
    from diarylab.model_access.shared_models import ModelRef

    settings = LocalSettings(device="cpu")
    model = LocalModel.load(str(tiny_model_folder), settings)
    return model, ModelRef(str(tiny_model_folder), settings)


@pytest.fixture(scope="session")
def tiny_split_model(tiny_model_folder):
    from diarylab.model_access.local import LocalModel
    from diarylab.model_access.settings import LocalSettings

    return LocalModel.load(str(tiny_model_folder), LocalSettings(device_map=SPLIT_MAP))


@pytest.fixture(scope="session")
def smollm2():
    from diarylab.model_access.local import LocalModel
    from diarylab.model_access.settings import LocalSettings

    return LocalModel.load("smollm2", LocalSettings(device="cpu"))


@pytest.fixture(scope="session")
def vllm_server(tmp_path_factory, smollm2_folder):
    """One real vLLM server for the whole session (the `vllm` tier; testing/vllm_server.py):
    started on first use, serving the converted embedded default on loopback, stopped by its
    process group's id at the end of the session."""
    from diarylab.testing.vllm_server import start, stop

    server = start(smollm2_folder, tmp_path_factory.mktemp("vllm") / "server.log")
    try:
        yield server
    finally:
        stop(server)


@pytest.fixture(scope="session")
def shape_servers(tmp_path_factory, smollm2_folder):
    """The shipped study's own model shapes on the vLLM CPU build (the `vllm` tier), built with
    random weights and launched together at first use, so that their start-ups overlap: the
    Mistral-format judge with the docs' format flags, the gpt-oss judge, and the thinking
    Qwen3-shaped chatbot without and with `--reasoning-parser qwen3`. A test that kills one
    puts the server it brings back in its place; every one left is stopped at the end."""
    from diarylab.testing.seed_shapes import build_gpt_oss_judge, build_mistral_judge, docs_flags
    from diarylab.testing.thinking_model import build_thinking_model
    from diarylab.testing.vllm_server import launch, start_together, stop_all

    made = tmp_path_factory.mktemp("shapes")
    hf, native = build_mistral_judge(made / "mistral")
    gpt_oss = build_gpt_oss_judge(made / "gpt-oss")
    thinking = build_thinking_model(smollm2_folder, made / "thinking")
    small = {"max_model_len": 2048, "kv_cache_gib": 1}
    planned = {
        "mistral": (native, docs_flags("mistralai/Mistral-Small-3.1-24B-Instruct-2503")),
        "gpt-oss": (gpt_oss, ()),
        "no parser": (thinking, ()),
        "qwen3 parser": (thinking, ("--reasoning-parser", "qwen3")),
    }
    launched = [
        launch(folder, made / f"{name.replace(' ', '-')}.log", extra_args=flags, **small)
        for name, (folder, flags) in planned.items()
    ]
    servers = dict(zip(planned, start_together(*launched), strict=True))
    servers_and_folders = {"servers": servers, "mistral_hf": hf, "gpt_oss": gpt_oss}
    servers_and_folders["thinking"] = thinking
    try:
        yield servers_and_folders
    finally:
        stop_all(list(servers.values()), grace_s=3.0)


def pytest_terminal_summary(terminalreporter):
    from diarylab.testing.vllm_server import STARTED

    for server in STARTED:
        terminalreporter.write_line(
            f"vLLM server (the `vllm` tier): healthy {server.start_s} s after launch"
        )


@pytest.fixture(scope="module")
def browser():
    """Headless Chromium (the `browser` tier), one per test module."""
    from diarylab.testing.html_pages import chromium_path

    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright (the dev extra)")
    with sync_api.sync_playwright() as p:
        # --no-sandbox: CI runs as root, where Chromium's sandbox refuses to start.
        b = p.chromium.launch(executable_path=chromium_path(), args=["--no-sandbox"])
        yield b
        b.close()
