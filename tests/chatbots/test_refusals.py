"""The refusal phrases as a data file, and flagging replies with them."""

from __future__ import annotations

import pytest

from diarylab.chatbots.refusals import classify, load_refusals, refusal_openings
from diarylab.foundation.errors import LabError


def test_shipped_openings_flag_refusals():
    assert load_refusals().openings and all(o == o.lower() for o in refusal_openings())
    assert classify("  I can’t help with that.") == "refusal"
    assert classify("   ") == "empty"
    assert classify("That sounds hard.") is None
    assert classify("That sounds hard.", api_refusal=True) == "refusal"


@pytest.mark.parametrize(
    ("text", "field"),
    [
        ('[refusals]\nversion = 1\nopenings = ["sorry", ""]\n', "refusals.openings[1]"),
        ('[refusals]\nversion = 1\nopenings = "sorry"\n', "refusals.openings"),
        ("[refusals]\nversion = 1\n", "refusals.openings"),
        ('[refusals]\nversion = 1\nopenings = []\nphrases = ["x"]\n', "refusals.phrases"),
        ('[refusal]\nversion = 1\nopenings = ["sorry"]\n', "refusals"),
    ],
)
def test_malformed_refusals_file_names_file_and_field(tmp_path, text, field):
    path = tmp_path / "refusals.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(LabError) as err:
        load_refusals(path)
    assert str(err.value).startswith(f"{path} {field}:") and "fix:" in str(err.value)
