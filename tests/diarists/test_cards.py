"""Role cards and the entry template as data files: the shipped ones load, and a malformed file
is one LabError naming the file and the field."""

from __future__ import annotations

from pathlib import Path

import pytest

from diarylab.diarists.cards import CARDS_DIR, available_cards, load_card, load_cards
from diarylab.diarists.templates import TEMPLATES_DIR, first_entry_messages, load_entry_template
from diarylab.foundation.errors import LabError


def test_shipped_cards_load():
    cards = load_cards()
    assert [c.id for c in cards] == available_cards() and len(cards) == 8
    for card in cards:
        assert card.version >= 1 and card.age > 0 and card.people and len(card.sha256) == 64
        assert set(card.fields()) >= {"name", "age", "people", "voice"}
    assert load_cards(["amara"]) == [load_card(CARDS_DIR / "amara.toml")]


def test_a_folder_of_ones_own_cards_is_read_in_place_of_the_shipped_ones(tmp_path, monkeypatch):
    """$DIARYLAB_CARDS_DIR (a cast of one's own; the rehearsal's extra cards) is where cards are
    read from, by the cast's validation and by the kinds' input files alike."""
    from diarylab.experiments.designs.opening import load_design

    own = tmp_path / "cards"
    own.mkdir()
    text = (CARDS_DIR / "amara.toml").read_text(encoding="utf-8")
    (own / "amara2.toml").write_text(text.replace('id = "amara"', 'id = "amara2"', 1))
    (own / "tomasz.toml").write_text((CARDS_DIR / "tomasz.toml").read_text(encoding="utf-8"))
    monkeypatch.setenv("DIARYLAB_CARDS_DIR", str(own))
    assert available_cards() == ["amara2", "tomasz"]
    assert [c.id for c in load_cards()] == ["amara2", "tomasz"]
    design_file = Path(__file__).resolve().parents[2] / "experiments" / "designs" / "demo.toml"
    copy = tmp_path / "demo.toml"
    copy.write_text(design_file.read_text().replace('["amara", "tomasz"]', '["amara2", "tomasz"]'))
    design = load_design(copy)
    inputs = [str(p) for p in design.kind.input_files(design)]
    assert str(own / "amara2.toml") in inputs
    monkeypatch.delenv("DIARYLAB_CARDS_DIR")
    with pytest.raises(LabError, match="amara2"):
        load_design(copy)  # the shipped cards have no amara2


def test_unknown_card_names_the_choices():
    with pytest.raises(LabError, match="tomasz"):
        load_cards(["nobody"])


def _card(tmp_path: Path, old: str, new: str, name: str = "amara") -> Path:
    text = (CARDS_DIR / "amara.toml").read_text(encoding="utf-8")
    assert old in text
    path = tmp_path / f"{name}.toml"
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
    return path


def _card_error(path: Path) -> str:
    with pytest.raises(LabError) as err:
        load_card(path)
    message = str(err.value)
    assert message.startswith(f"{path} ") and "fix:" in message
    return message.removeprefix(f"{path} ")


@pytest.mark.parametrize(
    ("old", "new", "field"),
    [
        ("age = 34", 'age = "34"', "card.age"),
        ("age = 34", "", "card.age"),
        ("voice =", "tone =", "card.voice"),  # the missing field comes first
        ("people = [", "people = [\n  '',", "card.people[0]"),
        ("pronouns =", "colour = 1\npronouns =", "card.colour"),
    ],
)
def test_malformed_card_names_file_and_field(tmp_path, old, new, field):
    assert _card_error(_card(tmp_path, old, new)).startswith(f"{field}:")


def test_card_needs_people(tmp_path):
    text = (CARDS_DIR / "amara.toml").read_text(encoding="utf-8")
    start = text.index("people = [")
    end = text.index("]", start)
    path = tmp_path / "amara.toml"
    path.write_text(text[:start] + "people = [" + text[end:], encoding="utf-8")
    assert _card_error(path).startswith("card.people:")


def test_card_id_must_match_file_name(tmp_path):
    message = _card_error(_card(tmp_path, 'id = "amara"', 'id = "amara2"'))
    assert message.startswith("card.id:") and "differs from the file name" in message


def test_card_file_needs_its_table(tmp_path):
    path = _card(tmp_path, "[card]", "[cards]")
    assert _card_error(path).startswith("card: missing")


def test_entry_template_loads_and_builds_messages():
    template = load_entry_template()
    assert template.days and len(template.sha256) == 64
    card = load_cards(["amara"])[0]
    messages = first_entry_messages(card, template, day_index=1)
    assert card.name in messages[0]["content"] and template.days[1] in messages[1]["content"]


@pytest.mark.parametrize(
    ("old", "new", "field"),
    [
        ("days = [", "days = [\n  3,", "template.days[0]"),
        ("next_entry =", "later_entry =", "template.next_entry"),
        ("version = 1", "version = true", "template.version"),
    ],
)
def test_malformed_entry_template_names_file_and_field(tmp_path, old, new, field):
    text = (TEMPLATES_DIR / "entry.toml").read_text(encoding="utf-8")
    assert old in text
    path = tmp_path / "entry.toml"
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
    with pytest.raises(LabError) as err:
        load_entry_template(path)
    assert str(err.value).startswith(f"{path} {field}:") and "fix:" in str(err.value)
