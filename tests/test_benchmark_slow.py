"""The shipped benchmark demo (the synthetic file, the embedded default as chatbot and judge)
end to end through the command line: killed with SIGKILL at several moments and resumed, it
ends with exactly the store of an unbroken run; running it again makes no model call; its
report renders."""

from __future__ import annotations

import signal
import sqlite3
import time
from pathlib import Path

import pytest

from tests.test_resume import progress, run_cli

# A demo run takes 5-10 minutes on 2 busy CPU cores; the test makes about two and a half.
pytestmark = [pytest.mark.slow, pytest.mark.timeout(3600)]
ROOT = Path(__file__).parent.parent
DEMO = ROOT / "experiments" / "designs" / "benchmark-demo.toml"
TABLES = ("bench_replies", "grader_answers", "judgments")


def tables(folder: Path) -> dict[str, list[tuple]]:
    db = sqlite3.connect(folder / "store.sqlite")
    out = {t: sorted(db.execute(f"SELECT * FROM {t}").fetchall(), key=repr) for t in TABLES}
    out["calls"] = sorted(db.execute("SELECT key, kind, model, request, result FROM calls"))
    db.close()
    return out


def test_the_benchmark_demo_resumes_after_kills_and_reports(tmp_path):
    reference = tmp_path / "reference"
    proc = run_cli(DEMO, reference)
    assert proc.wait(timeout=1800) == 0, proc.stdout.read().decode()
    expected = tables(reference)
    assert expected["bench_replies"] and expected["grader_answers"]

    broken = tmp_path / "broken"
    total = len(expected["calls"])
    seen = []
    # One kill in the grading (replies are one batch): each extra kill costs a whole demo run.
    for fraction in (0.5,):
        proc = run_cli(DEMO, broken)
        while proc.poll() is None and progress(broken) < fraction * total:
            time.sleep(0.05)
        assert proc.poll() is None, "the run finished before it could be killed"
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        seen.append(progress(broken))
    proc = run_cli(DEMO, broken)
    assert proc.wait(timeout=1800) == 0, proc.stdout.read().decode()
    assert all(0 < n < total for n in seen) and seen == sorted(seen), seen
    assert tables(broken) == expected

    proc = run_cli(DEMO, broken)
    out = proc.communicate(timeout=600)[0].decode()
    assert proc.returncode == 0 and "model calls made 0" in out, out

    from experiments.cli import main

    assert main(["report", str(broken)]) == 0
    findings = (broken / "report" / "findings.md").read_text()
    assert "## Leaderboard" in findings and "## Grading" in findings
