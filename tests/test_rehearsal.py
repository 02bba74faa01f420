"""A reduced paper-size rehearsal (bench/rehearsal.py): diary-full.toml at its full shape — three
calibrated profiles, four chatbots, both served judges, four entries — on one role card, every
model a zero-cost stand-in on the lab's real paths (the random Llama writes, the vLLM-faithful
judge stand-in reads exactly by token ids, a loopback OpenAI stand-in answers). Killed with
SIGKILL once partway through its judging and resumed, it ends with the store an unbroken run
ends with, and the same report. Slow: it makes the profiles and runs twice, in fresh processes;
its profiles are small and its texts short (rehearsal_design's small_profiles) to fit CI."""

from __future__ import annotations

import os

import pytest

from bench.rehearsal_kills import report_files, reports_differ
from bench.rehearsal_setup import KEY_ENV, cards_folder, rehearsal_design, stand_ins
from diarylab.testing.kill_resume import finish, kill_partway
from diarylab.testing.stores import opened, snapshot

# Its own tier (`-m rehearsal`), run in CI like the other slow tiers.
pytestmark = [pytest.mark.rehearsal, pytest.mark.timeout(1200)]


def test_a_reduced_rehearsal_killed_while_judging_resumes_to_the_unbroken_run(
    tmp_path, monkeypatch
):
    from diarylab.experiments.cli import main

    cards, ids = cards_folder(tmp_path, 1)
    monkeypatch.setenv("DIARYLAB_CARDS_DIR", str(cards))
    monkeypatch.setenv(KEY_ENV, "sk-rehearsal-not-a-key")
    monkeypatch.setenv("OMP_NUM_THREADS", "1")  # two runs' worth of processes on 2 cores
    with stand_ins(tmp_path, cards) as models:
        path = rehearsal_design("diary", tmp_path, models, ids, small_profiles=True)
        whole, broken = tmp_path / "unbroken", tmp_path / "killed"
        finish(path, whole, timeout_s=900)
        with opened(whole) as store:
            total = store.count("calls")
            judged = store.count("calls", where={"kind": "judge"})
            assert store.count("entries") == 1 * 4 * (1 + 3 * 4) and judged > 0
        # Killed once most of the texts are stored: inside the judging, for a run of this shape.
        (seen,) = kill_partway(path, broken, total, (1 - judged / total / 2,), poll_s=0.05)
        assert 0 < seen < total
        finish(path, broken, timeout_s=900)
    # Each run makes its own inline profiles; the same vector made twice has one content hash
    # (its creation time is not in it), so the two stores agree call for call, keys included.
    kept = ("entries", "replies", "judgments")
    assert snapshot(broken, kept) == snapshot(whole, kept)
    for folder in (whole, broken):
        assert main(["report", str(folder), "--resamples", "200"]) == 0
    # Every report file alike but for what says how each run went (the killed one made its calls
    # over two sessions): usage.csv and its section (bench/rehearsal_kills.py).
    assert reports_differ(broken, whole) == []
    assert sorted(report_files(broken)) == sorted(report_files(whole))
    findings = (whole / "report" / "findings.md").read_text(encoding="utf-8")
    assert "## Model calls and tokens" in findings  # the part left out is there to leave out
    assert os.path.getsize(whole / "report" / "index.html") > 0
