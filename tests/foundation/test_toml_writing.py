from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from diarylab.foundation.toml_writing import dump_toml

DESIGNS = sorted((Path(__file__).resolve().parents[2] / "experiments" / "designs").glob("*.toml"))


@pytest.mark.parametrize("path", DESIGNS, ids=lambda p: p.name)
def test_shipped_designs_read_back_unchanged(path):
    data = tomllib.loads(path.read_text())
    assert tomllib.loads(dump_toml(data)) == data


def test_awkward_values_read_back_unchanged():
    data = {
        "title": 'quote " backslash \\ newline \n tab \t é',
        "odd key": 1.5e-7,
        "flags": [True, False],
        "nested": {"inline": {"a": [1, 2], "b": {}}, "big": 2**62},
        "rows": [{"id": "a", "x": {"y": "z"}}, {"id": "b"}],
    }
    assert tomllib.loads(dump_toml(data)) == data
