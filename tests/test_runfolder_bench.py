"""A benchmark run folder moves too: its data file and grader template are read from the
folder's own copies (found by the hashes the manifest records), so the report of a copy made
after the original folder and the data file are deleted is the same bytes."""

from __future__ import annotations

import json
import os
import shutil

from experiments.cli import main
from experiments.loading import load_design
from experiments.runner import run_design
from tests.test_benchmark_run import DATA
from tests.test_benchmark_run import design as bench_design
from tests.test_benchmark_run import servers as servers  # the fixture, for this module


def test_a_moved_benchmark_folder_reports_identically_without_its_data_file(
    tmp_path, tiny_model_folder, servers
):
    chat, judge = servers
    data = tmp_path / "data" / "bench.jsonl"
    data.parent.mkdir()
    shutil.copyfile(DATA, data)
    path = bench_design(
        tmp_path, tiny_model_folder, chat.base_url, judge.base_url, sample=2, local_judge=True
    )
    path.write_text(path.read_text().replace(os.path.relpath(DATA, tmp_path), "data/bench.jsonl"))
    run = tmp_path / "run"
    run_design(load_design(path), run, progress=False)
    moved = tmp_path / "elsewhere" / "run"
    shutil.copytree(run, moved)
    assert main(["report", str(run)]) == 0
    findings = (run / "report" / "findings.md").read_bytes()

    locked = json.loads((moved / "inputs.json").read_text())["inputs"]
    assert locked[str(data.resolve())]["copy"].startswith("inputs/files/")
    shutil.rmtree(run)
    data.unlink()
    assert main(["report", str(moved)]) == 0
    assert (moved / "report" / "findings.md").read_bytes() == findings
