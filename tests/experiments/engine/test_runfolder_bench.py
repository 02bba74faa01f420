"""A benchmark run folder moves too, without its data file: the folder records the file by
name, sha256 and the sample's ids (never a copy: the data may not be redistributable), keeps
the sampled conversations in its store and its grader template as a copy, so the report of a
copy made after the original folder and the data file are deleted is the same bytes; a resume
of the moved folder reads the user's own copy of the file, refused when its hash differs."""

from __future__ import annotations

import json
import os
import shutil

import pytest

from diarylab.experiments.cli import main
from diarylab.experiments.designs.opening import load_design
from diarylab.experiments.engine.inputs import file_sha256
from diarylab.experiments.running.runner import run_design
from diarylab.foundation.errors import LabError
from diarylab.testing.benchmark_runs import DATA
from diarylab.testing.benchmark_runs import design as bench_design
from diarylab.testing.benchmark_runs import servers as servers  # the fixture, for this module


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
    assert not any(name.endswith("bench.jsonl") for name in locked)  # no copy of the data
    assert not any(p.name == "bench.jsonl" for p in moved.rglob("*"))
    recorded = json.loads((moved / "manifest.json").read_text())["benchmark"]
    assert recorded["file"] == "bench.jsonl" and "path" not in recorded
    assert recorded["sample"]["data_sha256"] == file_sha256(data)
    assert len(recorded["sample"]["ids"]) == 2
    assert str(tmp_path) not in (moved / "manifest.json").read_text()
    shutil.rmtree(run)
    kept = tmp_path / "kept.jsonl"
    shutil.move(data, kept)
    assert main(["report", str(moved)]) == 0
    assert (moved / "report" / "findings.md").read_bytes() == findings
    assert str(tmp_path) not in findings.decode()
    assert main(["status", str(moved), "--verify"]) == 0
    assert main(["export", str(moved)]) == 0
    assert (moved / "export" / "tables" / "bench_conversations.parquet").is_file()
    assert (moved / "export" / "texts.parquet").is_file()

    # A resume of the moved folder reads the user's copy: another file is one clear error...
    data.write_text(kept.read_text() + "\n")  # the same rows, another file (sha256)
    with pytest.raises(LabError, match="not the one the run sampled") as refused:
        run_design(load_design(path), moved, progress=False)
    assert recorded["sample"]["data_sha256"] in refused.value.fix
    # ...and their copy of the same file resumes with nothing to call again.
    shutil.copyfile(kept, data)
    again = run_design(load_design(path), moved, progress=False)
    assert again.calls_made == 0
