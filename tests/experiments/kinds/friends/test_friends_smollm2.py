"""A reduced friends design on the embedded default (SmolLM2-135M) as writer and judge, through
the command line: killed with SIGKILL once after some letters are stored and resumed with the
same store, it reuses every stored call, rewrites no letter and completes; its report renders
with its plot. Slow: minutes on a CPU, so the design is as small as the balance allows (two
role cards in both seats and orders: 4 pairs per condition), one steered condition and the
fixed-friend control, one letter per writer (the second writer still answers the first), short
letters, one pattern score: the judging, not the writing, takes most of the time."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from diarylab.diarists.profiles import write_profile
from diarylab.experiments.cli import main
from diarylab.model_access.local import LocalModel
from diarylab.model_access.settings import LocalSettings
from diarylab.steering.settings import SteerSettings
from diarylab.steering.vectors import random_vector
from diarylab.testing.friends_fixtures import FIRST_HYPOTHESIS, friends_design
from diarylab.testing.kill_resume import finish, kill_partway
from diarylab.testing.stores import opened

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1800)]

# 4 steered pairs × 2 writers + 4 fixed-friend pairs × 1 writer, one letter each.
MODEL_LETTERS = 4 * 2 + 4
CALLS = MODEL_LETTERS * 3  # each letter, its pattern score and its identity check (at most:
# an empty letter is not judged)


def smollm2_design(folder: Path, model_folder: Path) -> Path:
    path = friends_design(
        folder,
        model_folder,
        controls='["fixed_friend"]',
        entries=1,
        outcome="[1]",
        hypotheses=FIRST_HYPOTHESIS,
    )
    # A random direction at the depth and strength the demo steers SmolLM2 with: the pipeline,
    # not a finding (the demo design extracts a real vector; that takes longer).
    model = LocalModel.load(str(model_folder), LocalSettings(device="cpu"))
    vector = random_vector(model.info(), seed=5, pattern_id="social_isolation")
    sha = vector.save(folder / "vectors" / "si")
    profile = write_profile(
        folder / "profiles" / "tiny-social_isolation.toml",
        profile_id="tiny-social_isolation",
        pattern="social_isolation",
        vector=folder / "vectors" / "si",
        vector_sha256=sha,
        steer=SteerSettings(layers=[20], strength=0.25),
    )
    text = path.read_text().replace("max_new_tokens = 6", "max_new_tokens = 20")
    assert str(profile) in text  # replaces the tiny profile friends_design made at that path
    path.write_text(text)
    return path


def snapshot(folder: Path) -> tuple[dict[str, tuple], dict[str, str]]:
    """The stored letters (by id) and calls (key -> result)."""
    with opened(folder) as store:
        letters = {r[0]: r[1:] for r in store.select("letters")}
        calls = {c[0]: c[4] for c in store.calls_of()}
    return letters, calls


def model_texts(folder: Path) -> list[tuple[str, str | None]]:
    with opened(folder) as store:
        return store.select("letters", ["text", "call_key"])


def test_friends_on_the_embedded_default_resumes_and_reports(tmp_path, smollm2_folder, monkeypatch):
    # One intra-op thread per run: on a shared 2-core machine torch's default threads contend
    # with each other (measured here: a SmolLM2 decode step 1.5 s with 2 threads, 0.17 s with 1).
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    design = smollm2_design(tmp_path, smollm2_folder)
    out = tmp_path / "run"
    # Killed once in the letter phase, after some letters are stored.
    (stored,) = kill_partway(design, out, CALLS, (0.1,), poll_s=0.05)
    letters_before, calls_before = snapshot(out)
    assert 0 < len(calls_before) == stored < MODEL_LETTERS, stored
    assert letters_before

    made = re.search(r"model calls made (\d+)", finish(design, out, timeout_s=1500))
    letters, calls = snapshot(out)
    texts = [text for text, key in model_texts(out) if key is not None]
    assert len(texts) == MODEL_LETTERS
    judged = sum(bool(t.strip()) for t in texts)
    assert len(calls) == MODEL_LETTERS + 2 * judged  # complete
    assert made is not None and int(made[1]) == len(calls) - stored
    assert all(calls[k] == v for k, v in calls_before.items())  # every stored call reused
    assert all(letters[i] == row for i, row in letters_before.items())  # no letter rewritten
    assert len(letters) == MODEL_LETTERS + 4  # and the fixed friend's letters
    assert sum(len(t.split()) > 5 for t in texts) > len(texts) / 2  # mostly real prose
    # That a finished friends run asked again makes no call is
    # tests/experiments/kinds/friends/test_friends_resume.py's (on the tiny model): another SmolLM2
    # process here would add 15-20 s to CI for nothing new.

    assert main(["report", str(out)]) == 0
    findings = (out / "report" / "findings.md").read_text()
    assert "## Primary outcome against both controls" in findings
    assert "## Hypotheses (preregistered)" in findings
    png = out / "report" / "plots" / "letters_tiny-judge.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 5000
    assert "](plots/letters_tiny-judge.png)" in findings
