"""A benchmark run killed with SIGKILL while it grades, through the command line, and resumed:
it ends with exactly the store of an unbroken run, and running it again makes no model call.
The tiny random model is chatbot and grader, so the kill lands between stored batches in
seconds; tests/experiments/kinds/benchmark/test_benchmark_slow.py runs the shipped demo on the
embedded default once."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

from diarylab.testing.kill_resume import finish, kill_partway, progress
from diarylab.testing.stores import snapshot

DATA = Path(__file__).resolve().parents[3] / "data" / "mentalhealthbench_synthetic.jsonl"
TABLES = ("bench_replies", "grader_answers", "judgments")


def design(folder: Path, model: Path) -> Path:
    path = folder / "bench.toml"
    path.write_text(
        textwrap.dedent(
            f"""
            [design]
            name = "bench-resume"
            kind = "benchmark"
            seed = 11
            coverage_floor = 0.0

            [benchmark]
            data = "{os.path.relpath(DATA, folder)}"
            format = "mentalhealthbench"
            sample = 4
            grader = {{ generation = {{ max_new_tokens = 6, temperature = 0.7 }}, retries = 1 }}

            [analysis]
            resamples = 200

            [[chatbots]]
            id = "thanks"
            kind = "fixed"

            [[chatbots]]
            id = "tiny"
            kind = "local"
            model = "{model}"
            generation = {{ max_new_tokens = 8, temperature = 0.9 }}
            local = {{ batch_size = 8 }}

            [[judges]]
            id = "tiny-judge"
            kind = "local"
            model = "{model}"
            local = {{ batch_size = 8 }}
            """
        )
    )
    return path


def tables(folder: Path) -> dict[str, list[tuple]]:
    """Every row, and everything about a call but the time it was made."""
    return snapshot(folder, TABLES)


def test_a_benchmark_killed_while_grading_resumes_to_the_unbroken_store(
    tmp_path, tiny_model_folder
):
    path = design(tmp_path, tiny_model_folder)
    reference = tmp_path / "reference"
    finish(path, reference, timeout_s=600)
    expected = tables(reference)
    total = len(expected["calls"])
    assert expected["bench_replies"] and expected["grader_answers"] and total > 20

    broken = tmp_path / "broken"
    seen = kill_partway(path, broken, total, (0.5,), poll_s=0.01)
    assert all(0 < n < total for n in seen), seen
    finish(path, broken, timeout_s=600)
    assert progress(broken) == total
    assert tables(broken) == expected
    assert "model calls made 0" in finish(path, broken, timeout_s=600)
