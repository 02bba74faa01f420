"""Grader validation: the agreement table on scores built by hand, the pool file's checks, and
a run that asks for both candidate graders and reports them."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pandas as pd
import pytest

from diarylab.experiments.cli import main
from diarylab.experiments.designs.opening import load_design
from diarylab.experiments.kinds.benchmark.validation import agreement_table
from diarylab.experiments.kinds.benchmark.validation_tasks import POOL_FILE, PoolFile, load_pool
from diarylab.experiments.running.runner import run_design
from diarylab.foundation.datafiles import load_data
from diarylab.foundation.errors import LabError
from diarylab.testing.benchmark_runs import design, servers  # noqa: F401 - the fixture
from diarylab.testing.stores import opened


def scores(candidate) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    rows = []
    for b, level in {"a": 0.2, "b": 0.5, "c": 0.8}.items():
        for c in range(30):
            ref = float(np.clip(level + rng.normal(0, 0.15), 0, 1))
            rows.append(("j", b, f"c{c}", ref, candidate(ref, rng), candidate(ref, rng)))
    columns = ["judge", "chatbot", "conversation", "reference"]
    return pd.DataFrame(rows, columns=[*columns, "borrowed_criteria", "behavior_rubric"])


def test_a_perfect_candidate_agrees_and_a_reversed_one_disagrees():
    same = agreement_table(scores(lambda r, rng: r), resamples=200, seed=1)
    assert list(same.rho) == pytest.approx([1.0, 1.0]) and list(same.tau) == pytest.approx([1, 1])
    assert (same.replies == 90).all() and (same.chatbots == 3).all()
    flipped = agreement_table(scores(lambda r, rng: -r), resamples=200, seed=1)
    assert list(flipped.rho) == pytest.approx([-1, -1]) and list(flipped.tau) == pytest.approx(
        [-1, -1]
    )
    noise = agreement_table(scores(lambda r, rng: rng.random()), resamples=200, seed=1)
    assert (noise.rho_low < 0.3).all() and (noise.rho_low <= noise.rho).all()
    assert (noise.rho <= noise.rho_high).all()


def test_the_pool_names_every_behavior_question_once(tmp_path):
    pool = load_pool()
    assert len(pool.criteria()) >= 20 and any(c.points < 0 for c in pool.criteria())
    broken = tmp_path / "pool.toml"
    broken.write_text(POOL_FILE.read_text().replace('    "blames_writer",\n', ""))
    with pytest.raises(LabError, match="behavior_polarity"):
        load_data(broken, PoolFile)


def test_a_run_with_both_candidate_graders_reports_them(
    tmp_path,
    tiny_model_folder,
    servers,  # noqa: F811
):
    chat, judge = servers
    path = design(tmp_path, tiny_model_folder, chat.base_url, judge.base_url, sample=2)
    text = path.read_text().replace(
        "retries = 1 }", 'retries = 1 }\nvalidation = ["borrowed_criteria", "behavior_rubric"]'
    )
    path.write_text(text)
    out = tmp_path / "run"
    first = run_design(load_design(path), out, progress=False)
    with opened(out) as store:
        items = [item for (item,) in store.select("judgments", ["item"])]
    kinds = Counter(item[: item.index(":") + 1] if ":" in item else "" for item in items)
    pool = len(load_pool().criteria())
    assert kinds["borrowed-select:"] == 2 * pool  # every pool criterion, per conversation
    assert kinds["behavior-person:"] == 2 * 2 and kinds["behavior:"] == 6 * 15
    assert kinds.get("borrowed:", 0) > 0  # the chosen ones, graded like the reply's own
    again = run_design(load_design(path), out, progress=False)
    assert again.calls_made == 0 and again.rows == first.rows
    assert main(["report", str(out)]) == 0
    findings = (out / "report" / "findings.md").read_text()
    assert "## Grader validation" in findings
    assert (
        "| served | borrowed_criteria |" in findings and "| served | behavior_rubric |" in findings
    )
