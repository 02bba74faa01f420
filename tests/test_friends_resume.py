"""A friends run killed with SIGKILL at arbitrary moments and resumed ends with exactly the
store of an uninterrupted run (the pattern of tests/test_resume.py)."""

from __future__ import annotations

import signal
import sqlite3
import time
from pathlib import Path

from tests.friends_fixtures import FIRST_HYPOTHESIS, friends_design
from tests.test_resume import progress, run_cli


def tables(folder: Path) -> dict[str, list[tuple]]:
    db = sqlite3.connect(folder / "store.sqlite")
    out = {
        t: sorted(db.execute(f"SELECT * FROM {t}").fetchall(), key=repr)
        for t in ("letters", "judgments")
    }
    out["calls"] = sorted(db.execute("SELECT key, kind, model, request, result FROM calls"))
    db.close()
    return out


def test_killed_friends_runs_resume_to_the_same_store(tmp_path, tiny_model_folder):
    design = friends_design(
        tmp_path,
        tiny_model_folder,
        controls='["fixed_friend"]',
        entries=2,
        outcome="[2]",
        hypotheses=FIRST_HYPOTHESIS,
    )
    reference = tmp_path / "reference"
    proc = run_cli(design, reference)
    assert proc.wait(timeout=900) == 0, proc.stdout.read().decode()
    expected = tables(reference)
    assert expected["letters"] and expected["judgments"]

    broken = tmp_path / "broken"
    total = len(expected["calls"])
    seen = []
    for fraction in (0.15, 0.45, 0.8):
        proc = run_cli(design, broken)
        while proc.poll() is None and progress(broken) < fraction * total:
            time.sleep(0.02)
        assert proc.poll() is None, "the run finished before it could be killed"
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        seen.append(progress(broken))
    proc = run_cli(design, broken)
    assert proc.wait(timeout=900) == 0, proc.stdout.read().decode()
    assert all(0 < n < total for n in seen) and seen == sorted(seen), seen
    assert tables(broken) == expected

    proc = run_cli(design, broken)
    out = proc.communicate(timeout=300)[0].decode()
    assert proc.returncode == 0 and "model calls made 0" in out, out
