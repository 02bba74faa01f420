"""Lab data files (loaded directly; one LabError naming the file and the field, with a fix):
the entry template refuses unknown placeholders ({hometown}, {weather}, {reply[0]}) and
unbalanced braces when loaded; every card field is a placeholder the template may use;
card-age-a-string, card-unknown-key, card-id-not-its-name, card-no-people,
rubric-unknown-condition, rubric-duplicate-id, refusals-blank-opening,
judge-template-no-prefill, judge-template-version-a-string
"""

from __future__ import annotations

from pathlib import Path

import pytest

from diarylab.foundation.errors import LabError
from diarylab.testing.bad_inputs import (
    ENTRY_TEMPLATE,
    ROOT,
    sub,
)


def test_an_entry_template_with_an_unknown_placeholder_is_refused_when_loaded(tmp_path):
    from diarylab.diarists.templates import load_entry_template

    for old, new, field_name in [
        ("living in {home}", "living in {hometown}", "template.system"),
        ("It is {day}. Write", "It is {day}, {weather}. Write", "template.first_entry"),
        ('answered:\n\n"{reply}"', 'answered:\n\n"{reply[0]}"', "template.next_entry"),
        ("It is {day}. Write", "It is {day. Write", "template.first_entry"),
    ]:
        bad = tmp_path / "entry.toml"
        bad.write_text(sub(ENTRY_TEMPLATE.read_text(), old, new))
        with pytest.raises(LabError) as caught:
            load_entry_template(bad)
        message = str(caught.value)
        assert str(bad) in message and field_name in message and " — fix: " in message, message
        assert len(message.splitlines()) == 1
    assert load_entry_template().system  # the shipped template passes


def test_every_card_field_is_a_template_placeholder():
    from diarylab.diarists.cards import CARD_FIELDS, CARDS_DIR, load_card

    assert set(load_card(CARDS_DIR / "amara.toml").fields()) == set(CARD_FIELDS)


# The lab's own data files are read by the commands, not named on the command line: a bad copy
# is loaded directly and must be one LabError naming the file and the field, with a fix.
def _card(path):
    from diarylab.diarists.cards import load_card

    return load_card(path)


def _rubric(path):
    from diarylab.rubric.behavior_rubric import load_behavior_rubric

    return load_behavior_rubric(path)


def _refusals(path):
    from diarylab.chatbots.refusals import load_refusals

    return load_refusals(path)


def _judge_template(path):
    from diarylab.rubric.prompts import load_template

    return load_template(path)


CARD = ROOT / "diarists" / "cards" / "amara.toml"
RUBRIC = ROOT / "rubric" / "behavior_rubric.toml"
REFUSALS = ROOT / "chatbots" / "refusals.toml"
COHERENCE = ROOT / "rubric" / "templates" / "coherence.toml"


def L(load, source: Path, old: str, new: str, field: str, says: str, *, id: str, name=""):
    return pytest.param(load, source, old, new, field, says, name, id=f"labdata-{id}")


LAB_DATA_CASES = [
    L(_card, CARD, "age = 34", 'age = "34"', "card.age", "whole number", id="card-age-a-string"),
    L(
        _card,
        CARD,
        "version = 1",
        'version = 1\nhobby = "chess"',
        "card.hobby",
        "unknown field",
        id="card-unknown-key",
    ),
    L(
        _card,
        CARD,
        "age = 34",
        "age = 34",
        "card.id",
        "differs from the file name",
        id="card-id-not-its-name",
        name="bob.toml",
    ),
    L(
        _card,
        CARD,
        "people = [",
        "people = []\nx = [",
        "card.people",
        "at least 1",
        id="card-no-people",
    ),
    L(
        _rubric,
        RUBRIC,
        '\napplies_when = "risk"',
        '\napplies_when = "danger"',
        "question",
        "unknown person question 'danger'",
        id="rubric-unknown-condition",
    ),
    L(
        _rubric,
        RUBRIC,
        'id = "rigid_view"',
        'id = "risk"',
        "person",
        "question ids repeat",
        id="rubric-duplicate-id",
    ),
    L(
        _refusals,
        REFUSALS,
        "openings = [",
        'openings = [\n  " ",',
        "refusals.openings[0]",
        "pattern",
        id="refusals-blank-opening",
    ),
    L(
        _judge_template,
        COHERENCE,
        'prefill = "Score: "',
        "",
        "template.prefill",
        "missing",
        id="judge-template-no-prefill",
    ),
    L(
        _judge_template,
        COHERENCE,
        "version = 1",
        'version = "1"',
        "template.version",
        "whole number",
        id="judge-template-version-a-string",
    ),
]


@pytest.mark.parametrize(("load", "source", "old", "new", "field", "says", "name"), LAB_DATA_CASES)
def test_a_bad_lab_data_file_is_one_clear_error_when_loaded(
    tmp_path, load, source, old, new, field, says, name
):
    bad = tmp_path / (name or source.name)
    bad.write_text(sub(source.read_text(), old, new))
    with pytest.raises(LabError) as caught:
        load(bad)
    message = str(caught.value)
    assert len(message.splitlines()) == 1 and " — fix: " in message, message
    for part in (str(bad), field, says):
        assert part in message, f"{part!r} not in {message!r}"
