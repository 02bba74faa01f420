"""One writer per run folder: a second `run` on a folder in use exits 2 naming the holder and
makes no call; a lock left by a killed run is stale and does not stop the next run."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from diarylab.experiments.engine.runlock import run_lock
from diarylab.foundation.errors import LabError
from diarylab.testing.lab_fixtures import design_text, make_profile
from diarylab.testing.stores import opened

ROOT = Path(__file__).resolve().parents[3]


def cli(*args: str) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen(
        [sys.executable, "-m", "diarylab.experiments.cli", *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )


def test_a_held_lock_refuses_a_second_holder(tmp_path):
    with run_lock(tmp_path) as previous:
        assert previous == {}
        with pytest.raises(LabError, match=f"pid {os.getpid()}"):
            with run_lock(tmp_path):
                pass
    with run_lock(tmp_path) as previous:  # released: lockable again, and says who held it
        assert previous["pid"] == os.getpid()


def test_a_killed_runs_lock_is_stale(tmp_path):
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    (tmp_path / ".lock").write_text(json.dumps({"pid": dead.pid, "host": "h", "since": 0}))
    with run_lock(tmp_path) as previous:
        assert previous["pid"] == dead.pid


def test_two_runs_on_one_folder_make_each_call_once(tmp_path, tiny_model_folder):
    profile = make_profile(tmp_path, tiny_model_folder)
    design = tmp_path / "design.toml"
    text = design_text(tiny_model_folder, profile, entries=2, diarists='["amara"]')
    design.write_text(
        text.replace('entry = ["pattern", "coherence", "realism"]', 'entry = ["coherence"]')
    )
    out = tmp_path / "run"
    runs = [cli("run", str(design), "--out", str(out), "--no-progress") for _ in range(2)]
    outputs = [r.communicate(timeout=600)[0].decode() for r in runs]
    codes = sorted(r.returncode for r in runs)
    assert codes in ([0, 0], [0, 2]), outputs
    refused = [o for r, o in zip(runs, outputs, strict=True) if r.returncode == 2]
    assert all("another run is writing to this folder (pid" in o for o in refused), refused
    made = sum(int(m.group(1)) for o in outputs if (m := re.search(r"model calls made (\d+)", o)))
    with opened(out) as store:
        stored = store.count("calls")
    assert stored > 0 and made == stored  # every call made once, by one writer at a time
