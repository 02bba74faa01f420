"""The shipped benchmark demo (the synthetic file, the embedded default as chatbot and judge)
end to end through the command line: it runs, running it again makes no model call and leaves
the store as it was, and its report renders. Killing and resuming a benchmark run is
tests/experiments/kinds/benchmark/test_benchmark_resume.py's, on the tiny model: here each kill
cost a whole demo run."""

from __future__ import annotations

from pathlib import Path

import pytest

from diarylab.testing.kill_resume import finish
from diarylab.testing.stores import snapshot

# A demo run takes minutes on 2 CPU cores.
pytestmark = [pytest.mark.slow, pytest.mark.timeout(3600)]
ROOT = Path(__file__).resolve().parents[4]
DEMO = ROOT / "experiments" / "designs" / "benchmark-demo.toml"
TABLES = ("bench_replies", "grader_answers", "judgments")


def tables(folder: Path) -> dict[str, list[tuple]]:
    """Every row, and everything about a call but the time it was made."""
    return snapshot(folder, TABLES)


def test_the_shipped_benchmark_demo_runs_resumes_without_calls_and_reports(tmp_path):
    out = tmp_path / "run"
    finish(DEMO, out, timeout_s=1800)
    stored = tables(out)
    assert stored["bench_replies"] and stored["grader_answers"]

    assert "model calls made 0" in finish(DEMO, out, timeout_s=600)
    assert tables(out) == stored

    from diarylab.experiments.cli import main

    assert main(["report", str(out)]) == 0
    findings = (out / "report" / "findings.md").read_text()
    assert "## Leaderboard" in findings and "## Grading" in findings
