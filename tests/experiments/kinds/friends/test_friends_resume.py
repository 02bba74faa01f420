"""A friends run killed with SIGKILL at arbitrary moments and resumed ends with exactly the
store of an uninterrupted run (the pattern of tests/test_resume.py)."""

from __future__ import annotations

from pathlib import Path

from diarylab.testing.friends_fixtures import FIRST_HYPOTHESIS, friends_design
from diarylab.testing.kill_resume import finish, kill_partway
from diarylab.testing.stores import snapshot


def tables(folder: Path) -> dict[str, list[tuple]]:
    """Every row, and everything about a call but the time it was made."""
    return snapshot(folder, ("letters", "judgments"))


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
    finish(design, reference, timeout_s=900)
    expected = tables(reference)
    assert expected["letters"] and expected["judgments"]

    broken = tmp_path / "broken"
    total = len(expected["calls"])
    seen = kill_partway(design, broken, total, (0.15, 0.45, 0.8))
    finish(design, broken, timeout_s=900)
    assert all(0 < n < total for n in seen) and seen == sorted(seen), seen
    assert tables(broken) == expected
    assert "model calls made 0" in finish(design, broken, timeout_s=300)
