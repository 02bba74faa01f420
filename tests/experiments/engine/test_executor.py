"""The executor option: in-process by default, with nothing of Ray imported; Ray's options
without `--executor ray` are one clear error (exit 2), before anything loads."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from diarylab.experiments.cli import main
from diarylab.experiments.engine.executor import ExecutorSettings, InProcess
from diarylab.experiments.engine.executor_choice import open_executor
from diarylab.testing.lab_fixtures import FIXED_ONLY, design_text

ROOT = Path(__file__).resolve().parents[3]


def test_in_process_is_the_default_and_computes_each_batch_in_order():
    executor = open_executor(ExecutorSettings(), dict)
    assert isinstance(executor, InProcess) and executor.width == 1 and executor.status() == ""
    seen: list[list[int]] = []

    def compute(batch):
        seen.append(batch)
        return [{"i": i} for i in batch]

    out = list(executor.batches(compute, [[0, 1], [2]], label="x", to_actors=True))
    assert out == [([0, 1], [{"i": 0}, {"i": 1}]), ([2], [{"i": 2}])] and seen == [[0, 1], [2]]


def test_a_run_without_executor_imports_nothing_of_ray(tmp_path, tiny_model_folder):
    design = tmp_path / "design.toml"
    design.write_text(
        design_text(tiny_model_folder, None, entries=1, diarists='["amara"]', chatbots=FIXED_ONLY)
    )
    script = (
        "import sys\n"
        "from experiments.cli import main\n"
        f"rc = main(['run', {str(design)!r}, '--out', {str(tmp_path / 'run')!r}, "
        "'--no-progress'])\n"
        "assert rc == 0, rc\n"
        "print('RAY', sorted(m for m in sys.modules if m == 'ray' or m.startswith('ray.')))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "RAY []" in done.stdout
    assert (tmp_path / "run" / "store.sqlite").exists()


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--address", "auto"], "--address only apply to the Ray executor"),
        (["--actors", "2", "--actor-gpus", "1"], "--actors, --actor-gpus only apply"),
        (["--executor", "ray", "--actors", "0"], "--actors: Input should be greater than"),
        (["--executor", "ray", "--actor-gpus", "-1"], "--actor-gpus: Input should be greater"),
    ],
)
def test_wrong_executor_options_are_one_error_before_anything_runs(tmp_path, capsys, args, says):
    design = tmp_path / "missing.toml"  # never read: the options are checked first
    out = tmp_path / "run"
    assert main(["run", str(design), "--out", str(out), *args]) == 2
    err = capsys.readouterr().err
    assert says in err and "Traceback" not in err
    assert not out.exists()


def test_progress_shows_what_each_actor_is_doing(tmp_path):
    from diarylab.experiments.engine.progress import Progress
    from diarylab.experiments.engine.store import Store

    class Busy(InProcess):
        def status(self) -> str:
            return "a0 diarist tiny ×3 · a1 restarting · resent 1"

    store = Store(tmp_path / "store.sqlite")
    try:
        with Progress([("working", 5)], store, enabled=True) as bar:
            bar.tick(1)
            assert "actors" not in str(bar.bar.postfix)  # in-process: no actors to show
            store.executor = Busy()
            bar.tick(1)
            assert "a0 diarist tiny ×3 · a1 restarting · resent 1" in str(bar.bar.postfix)
    finally:
        store.close()
