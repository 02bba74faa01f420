"""foundation/atomic.py: a file written whole or not at all, and a kept JSON record read back
or passed over."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from diarylab.foundation.atomic import read_kept_json, write_atomic


def test_a_written_file_holds_the_whole_text_and_leaves_no_temporary_behind(tmp_path: Path):
    path = tmp_path / "deep" / "record.json"
    write_atomic(path, json.dumps({"a": 1}))
    write_atomic(path, b'{"a": 2}')
    assert read_kept_json(path) == {"a": 2}
    assert [p.name for p in path.parent.iterdir()] == ["record.json"]


@pytest.mark.parametrize(
    "text", [None, "", "{not json", "[1, 2]", '"a string"', "\xff".encode("latin-1")]
)
def test_a_missing_or_bad_kept_record_reads_as_none(tmp_path: Path, text):
    path = tmp_path / "record.json"
    if isinstance(text, bytes):
        path.write_bytes(text)
    elif text is not None:
        path.write_text(text, encoding="utf-8")
    assert read_kept_json(path) is None


def test_a_folder_in_the_records_place_reads_as_none(tmp_path: Path):
    assert read_kept_json(tmp_path) is None
