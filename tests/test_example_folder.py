"""The shipped example (results/example) is a complete run folder: its store, inputs and design
travel with it, so a fresh clone opens it (status), and its report, remade from the folder alone
in a copy elsewhere, is byte for byte the report that ships with it, every file of it."""

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
    shipped = sorted(p.relative_to(EXAMPLE / "report") for p in (EXAMPLE / "report").rglob("*"))
    remade = sorted(p.relative_to(example / "report") for p in (example / "report").rglob("*"))
    assert remade == shipped  # the same files: findings, page, tables, plots, per-diarist pages
    for name in shipped:
        if (EXAMPLE / "report" / name).is_file():
            theirs = (EXAMPLE / "report" / name).read_bytes()
            assert (example / "report" / name).read_bytes() == theirs, name


def test_a_folder_of_a_later_format_is_refused_with_one_message(example, capsys):
    import json

    manifest = example / "manifest.json"
    data = json.loads(manifest.read_text(encoding="utf-8"))
    assert data.get("folder_format", 1) == 1  # the shipped example predates the stamp: format 1
    manifest.write_text(json.dumps({**data, "folder_format": 2}), encoding="utf-8")
    capsys.readouterr()
    assert main(["status", str(example)]) == 2
    err = capsys.readouterr().err
    assert "folder_format" in err and "format 2" in err and "upgrade diarylab" in err
    assert "Traceback" not in err


def test_no_example_text_breaks_off_mid_sentence(example):
    """The first texts a newcomer reads end where their writer ended them or, where the token
    cap cut them, at their last full sentence (the demo's end_at_sentence); the report says so
    beside the count of cut texts."""
    import re

    import diarylab

    end = re.compile(r"[.!?\u2026][\"'\u201d\u2019)\]]*$")
    with diarylab.open_run(example) as run:
        texts = run.texts()
    cut = list(texts.loc[texts["flag"] == "truncated", "text"])
    assert cut, "the demo's caps cut some texts: the setting is what this shows"
    assert [t[-60:] for t in cut if not end.search(t.strip())] == []
    findings = (example / "report" / "findings.md").read_text(encoding="utf-8")
    assert "used up to its last full sentence (`end_at_sentence`)" in findings
