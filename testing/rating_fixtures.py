"""Shared helpers of the rating tests: a copy of the shipped example run with a locked sample,
and raters simulated from the judge's own readings (a noisy copy) or at random."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np

import diarylab
from diarylab.experiments.cli import main
from diarylab.experiments.rating.lock import LockedSample, read_lock

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "results" / "example"


def example_with_sample(folder: Path, *args: str) -> LockedSample:
    """A copy of the example run at `folder` with a sample drawn by `rate sample`."""
    shutil.copytree(EXAMPLE, folder)
    assert main(["rate", "sample", str(folder), *(args or ("--n", "40", "--raters", "2"))]) == 0
    sample = read_lock(folder)
    assert sample is not None
    return sample


def judge_readings(folder: Path) -> dict[tuple[str, str, str], float]:
    """(target kind, text id, item) -> the judge's value (the example has one judge)."""
    with diarylab.open_run(folder) as run:
        r = run.readings()
    return {
        (k, t, i): float(v)
        for k, t, i, v in zip(r["target_kind"], r["target_id"], r["item"], r["value"], strict=True)
    }


def simulated_answers(
    sample: LockedSample, judged: dict, *, noisy_copy: bool, seed: int
) -> dict[str, dict[str, object]]:
    """A rater's answers to every item. A noisy copy follows the judge's ordering of the
    sample's texts on each question: yes where the judge's P(yes) is above that question's
    median (flipped one time in ten), and on a 0–100 score the text's percentile among the
    judge's readings plus N(0, 5) (the example's SmolLM2 judge reads within a few points, so
    its raw scores would say little). A random rater flips a coin and picks 0 to 100."""
    rng = np.random.default_rng(seed)
    medians: dict[str, float] = {}
    percentiles: dict[tuple[str, str], float] = {}
    for q in sample.form:
        mine = [it for it in sample.items if it.target_kind == q.target]
        values = np.array([judged[(it.target_kind, it.target_id, q.item)] for it in mine])
        medians[q.key] = float(np.median(values)) if len(values) else 0.5
        ranks = values.argsort().argsort() / max(len(values) - 1, 1)
        percentiles |= {(it.item_id, q.key): 100 * r for it, r in zip(mine, ranks, strict=True)}
    out: dict[str, dict[str, object]] = {}
    for it in sample.items:
        given: dict[str, object] = {}
        for q in sample.questions_for(it.target_kind):
            v = judged[(it.target_kind, it.target_id, q.item)]
            if q.scale == "yes_no":
                yes = (
                    (v > medians[q.key]) != (rng.random() < 0.1)
                    if noisy_copy
                    else rng.random() < 0.5
                )
                given[q.key] = "yes" if yes else "no"
            elif noisy_copy:
                noisy = percentiles[(it.item_id, q.key)] + rng.normal(0, 5)
                given[q.key] = int(np.clip(round(noisy), 0, 100))
            else:
                given[q.key] = int(rng.integers(0, 101))
        out[it.item_id] = given
    return out


def page_file(path: Path, sample: LockedSample, rater: str, answers: dict) -> Path:
    """The file a rating page downloads, as its script writes it."""
    record = {
        "format": "diarylab-ratings/1",
        "sample_sha256": sample.sha256,
        "form_sha256": sample.form_sha256,
        "rater": rater,
        "saved": "2026-12-04T00:00:00.000Z",
        "answers": answers,
    }
    path.write_text(json.dumps(record), encoding="utf-8")
    return path
