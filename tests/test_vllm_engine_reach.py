"""[diarist_model].engine and [diarist_model].vllm reach the vLLM worker (no vLLM needed: the
worker's answers are stood in for at the engine's one method that talks to it; the real worker
is tested in tests/test_vllm_engine.py). A missing vLLM venv is one clear error before a run
writes anything."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

import model_access.vllm_engine as vllm_engine
from experiments.loading import load_design
from experiments.runner import run_design
from model_access.vllm_engine import EngineOutput, VllmEngine
from tests.kill_resume import ROOT
from tests.lab_fixtures import design_text, make_profile

ENGINE = """
engine = "vllm"
vllm = { max_model_len = 777, max_num_seqs = 3, gpu_memory_utilization = 0.3, block_size = 16 }
"""


def engine_design(tmp_path, tiny_model_folder):
    profile = make_profile(tmp_path, tiny_model_folder)
    text = design_text(tiny_model_folder, profile, entries=1, diarists='["amara"]')
    text = text.replace("local = { batch_size = 3 }", "local = { batch_size = 3 }" + ENGINE)
    path = tmp_path / "design.toml"
    path.write_text(text)
    return path


def test_the_vllm_engine_and_its_settings_reach_the_worker(
    tmp_path, tiny_model_folder, monkeypatch
):
    design = load_design(engine_design(tmp_path, tiny_model_folder))
    monkeypatch.setattr(vllm_engine, "vllm_python", lambda: Path(sys.executable))  # check() passes
    calls = []

    def worker(self, prompts, settings, seeds, steers):
        calls.append((self, settings, list(seeds or []), list(steers)))
        return [EngineOutput((7, 8), "length") for _ in prompts]

    monkeypatch.setattr(VllmEngine, "generate", worker)
    run_design(design, tmp_path / "run", progress=False)
    assert calls, "the diarist never reached the engine"
    engine, settings, seeds, steers = calls[0]
    assert engine.settings is design.spec.diarist_model.vllm
    assert settings is design.spec.diarist_model.generation
    command = engine.command()
    for flag, value in [
        ("--max-model-len", "777"),
        ("--max-num-seqs", "3"),
        ("--gpu-memory-utilization", "0.3"),
        ("--block-size", "16"),
        ("--dtype", "float32"),
        ("--model", str(tiny_model_folder)),
    ]:
        assert command[command.index(flag) + 1] == value
    # Steered and unsteered rows in one batch, a seed for each (the twins share theirs).
    assert any(s is None for s in steers) and any(s is not None for s in steers)
    assert len(seeds) == len(steers) and all(isinstance(s, int) for s in seeds)
    db = sqlite3.connect(tmp_path / "run" / "store.sqlite")
    request = json.loads(db.execute("SELECT request FROM calls WHERE kind='diarist'").fetchone()[0])
    assert request["generation"]["engine"] == {"name": "vllm", "dtype": "float32"}
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["diarist_settings"]["engine"] == "vllm"


@pytest.mark.parametrize("engine", ["vllm", "nnsight"])
def test_an_engine_that_cannot_run_is_one_clear_error(tmp_path, tiny_model_folder, engine):
    path = engine_design(tmp_path, tiny_model_folder)
    path.write_text(path.read_text().replace('engine = "vllm"', f'engine = "{engine}"'))
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
        "PYTHONPATH": str(ROOT),
        "HF_HUB_OFFLINE": "1",
        "DIARYLAB_VLLM_PYTHON": str(tmp_path / "no-such-venv" / "bin" / "python"),
    }
    out = tmp_path / "run"
    done = subprocess.run(
        [sys.executable, "-m", "experiments.cli", "run", str(path), "--out", str(out)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    if engine == "vllm":
        assert "setup-vllm.sh" in done.stderr and "[diarist_model].engine" in done.stderr
    else:
        assert "engine" in done.stderr and "transformers" in done.stderr
    assert not (out / "store.sqlite").exists()
