"""Running a design through the command line in a subprocess and killing it with SIGKILL
partway: the kill loop every resume test shares (tests/test_resume.py and its followers)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from diarylab.experiments.engine.store.files import calls_stored
from diarylab.testing.stores import snapshot

# the repository (resolved: this module is imported through the link diarylab/testing)
ROOT = Path(__file__).resolve().parents[1]


def run_cli(design: Path, out: Path) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "diarylab.experiments.cli",
            "run",
            str(design),
            "--out",
            str(out),
            "--no-progress",
        ],
        cwd=design.parent,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )


def progress(folder: Path, store: str = "store.sqlite") -> int:
    """Model calls stored so far in a store of the run folder (by default the run's; 0 before it
    exists)."""
    return calls_stored(folder / store)


def kill_partway(
    design: Path,
    out: Path,
    total: int,
    fractions: Sequence[float],
    *,
    poll_s: float = 0.02,
    store: str = "store.sqlite",
) -> list[int]:
    """Start a run into `out` once per fraction and SIGKILL it when `store` (the run's, or
    another under the run folder) holds that fraction of `total` calls, whatever the machine's
    speed; returns the calls stored at each kill. Each run must still be going when killed
    (else the test could not fail)."""
    seen = []
    for fraction in fractions:
        stored, ended = killed_at(design, out, fraction * total, poll_s, store)
        assert not ended, "the run finished before it could be killed"
        seen.append(stored)
    return seen


def killed_at(
    design: Path, out: Path, calls: float, poll_s: float, store: str = "store.sqlite"
) -> tuple[int, bool]:
    """Start a run into `out`, SIGKILL it once `store` holds `calls` calls; the calls stored
    at the kill, and whether the run had already ended by itself."""
    proc = run_cli(design, out)
    while proc.poll() is None and progress(out, store) < calls:
        time.sleep(poll_s)
    ended = proc.poll() is not None
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    return progress(out, store), ended


def kill_once_partway(
    design: Path, out: Path, total: int, fractions: Sequence[float], *, poll_s: float = 0.02
) -> int:
    """One kill that lands strictly between the first stored call and the last, trying each
    fraction in turn on a fresh folder. A run whose calls are stored in large batches (a judge's
    grouped readings, a served judge's concurrency) can pass a fraction and finish its calls
    between two polls on a loaded machine: that run was not killed partway, so it proves
    nothing and the next, earlier fraction is tried. Returns the calls stored at the kill."""
    tried = []
    for fraction in fractions:
        if out.exists():
            shutil.rmtree(out)
        seen, _ = killed_at(design, out, fraction * total, poll_s)
        if 0 < seen < total:
            return seen
        tried.append((fraction, seen))
    raise AssertionError(f"no kill landed partway (fraction, calls stored): {tried} of {total}")


def finish(design: Path, out: Path, timeout_s: float) -> str:
    """Run to the end (a resume when `out` holds a broken run); returns the run's output."""
    proc = run_cli(design, out)
    text = proc.communicate(timeout=timeout_s)[0].decode()
    assert proc.returncode == 0, text
    return text


def tables(folder: Path) -> dict[str, list[tuple]]:
    """Every row, and everything about a call but the time it was made."""
    return snapshot(folder, ("entries", "replies", "judgments"))
