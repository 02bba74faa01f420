"""The shipped example (results/example) is a complete run folder: its store, inputs and design
travel with it, so a fresh clone opens it (status), and its report, remade from the folder alone
in a copy elsewhere, is byte for byte the report that ships with it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from diarylab.experiments.cli import main

EXAMPLE = Path(__file__).parent.parent / "results" / "example"


@pytest.fixture()
def example(tmp_path) -> Path:
    copy = tmp_path / "published" / "example"
    shutil.copytree(EXAMPLE, copy, ignore=shutil.ignore_patterns(".lock", "*-wal", "*-shm"))
    return copy


def test_the_example_ships_its_store_and_inputs():
    assert (EXAMPLE / "store.sqlite").is_file()
    assert (EXAMPLE / "inputs").is_dir() and (EXAMPLE / "inputs.json").is_file()
    assert (EXAMPLE / "report" / "findings.md").is_file()


def test_the_example_opens_and_reports_as_shipped_from_a_copy(example, capsys):
    capsys.readouterr()
    assert main(["status", str(example), "--verify"]) == 0
    assert "the folder's copy of every input unchanged" in capsys.readouterr().out
    shutil.rmtree(example / "report")
    assert main(["report", str(example)]) == 0
    for name in ("findings.md", "index.html"):  # index.html: the browsable report
        shipped = (EXAMPLE / "report" / name).read_bytes()
        assert (example / "report" / name).read_bytes() == shipped, name
