"""The letter exchange: writers alternate, each sees their own letters as their turns and the
friend's inside the next user turn; steering applies to a steered writer's own letters only;
the fixed-letter friend never calls a model; a second pass makes no call."""

from __future__ import annotations

import json

import pytest

import diarylab.experiments.engine.writes as letters_module  # where letters are written
from diarylab.diarists.cards import CARDS_DIR, load_card
from diarylab.diarists.letters import letter_messages, load_fixed_letter, load_letter_template
from diarylab.experiments.designs.opening import load_design
from diarylab.experiments.engine.contract import RunContext
from diarylab.experiments.engine.store import Store
from diarylab.experiments.kinds.friends.rows import LetterRow
from diarylab.experiments.profiles.refs import profile_ids, resolve_profiles
from diarylab.model_access.local import LocalModel
from diarylab.model_access.settings import LocalSettings
from diarylab.testing.friends_fixtures import friends_design
from diarylab.testing.stores import call


def test_letter_messages_put_the_friend_inside_the_next_user_turn():
    amara, tomasz = load_card(CARDS_DIR / "amara.toml"), load_card(CARDS_DIR / "tomasz.toml")
    template = load_letter_template()
    opened = letter_messages(amara, tomasz, template, ["A1"], ["B1"], writes_first=True)
    assert [m["role"] for m in opened] == ["system", "user", "assistant", "user"]
    assert "Amara Okafor" in opened[0]["content"] and "Tomasz Wrona" in opened[0]["content"]
    assert "first letter" in opened[1]["content"] and opened[2]["content"] == "A1"
    assert '"B1"' in opened[3]["content"] and "Tomasz wrote back" in opened[3]["content"]
    answered = letter_messages(tomasz, amara, template, ["B1"], ["A1", "A2"], writes_first=False)
    assert [m["role"] for m in answered] == ["system", "user", "assistant", "user"]
    assert (
        '"A1"' in answered[1]["content"] and "A letter from Amara arrived" in answered[1]["content"]
    )
    assert answered[2]["content"] == "B1" and '"A2"' in answered[3]["content"]
    with pytest.raises(ValueError, match="letters alternate"):
        letter_messages(amara, tomasz, template, ["A1"], [], writes_first=True)


@pytest.fixture(scope="module")
def exchanged(tmp_path_factory, tiny_model_folder):
    folder = tmp_path_factory.mktemp("letters")
    path = friends_design(
        folder,
        tiny_model_folder,
        patterns=("social_isolation", "entitlement"),
        entries=2,
        outcome="[2]",
        hypotheses="",
    )
    design = load_design(path)
    profiles = resolve_profiles(design, design.kind.profile_refs(design))
    pairs = design.kind.cells(design, profile_ids(design))
    model = LocalModel.load(str(tiny_model_folder), LocalSettings(device="cpu"))
    store = Store(folder / "store.sqlite", design.kind.row_types)
    rows_generated: list[int] = []
    real = letters_module.write_steered

    def spy(model, chats, settings, **kw):
        rows_generated.append(len(chats))
        return real(model, chats, settings, **kw)

    letters_module.write_steered = spy
    try:
        run = RunContext(design, folder, store, model, profiles, {}, pairs)
        design.kind.converse(run)
        first_made = store.made
        design.kind.converse(run)  # everything is in the store: no call
    finally:
        letters_module.write_steered = real
    yield design, pairs, profiles, store, sum(rows_generated), first_made
    store.close()


def _request(store: Store, letter: LetterRow) -> dict:
    return call(store, letter.call_key)[0]


def test_every_letter_is_written_once_and_the_fixed_friend_calls_no_model(exchanged):
    design, pairs, _, store, generated, first_made = exchanged
    assert store.count("letters") == sum(2 * p.letters for p in pairs)
    fixed = load_fixed_letter().text
    rows = [store.get(LetterRow, i) for i in sorted(store.ids(LetterRow))]
    fixed_rows = [r for r in rows if r.profile == "fixed"]
    assert len(fixed_rows) == 4 * 2 and all(r.seat == "B" for r in fixed_rows)
    assert all(r.call_key is None and r.text == fixed for r in fixed_rows)
    written = [r for r in rows if r.profile != "fixed"]
    assert all(r.call_key for r in written)
    assert generated == len(written) == first_made  # the model wrote exactly the model letters
    assert store.made == first_made  # the second pass read everything back
    assert store.count("calls", where={"kind": "diarist"}) == len(written)


def test_each_writer_sees_the_right_history(exchanged):
    _, pairs, _, store, _, _ = exchanged
    pair = next(p for p in pairs if p.condition.count("+") and p.first == "B")
    text = {(s, k): store.get(LetterRow, pair.letter_id(s, k)).text for s in "AB" for k in (1, 2)}
    seat_a = store.get(LetterRow, pair.letter_id("A", 2))
    a2 = _request(store, seat_a)["messages"]
    assert [m["role"] for m in a2] == ["system", "user", "assistant", "user"]
    assert a2[2]["content"] == text["A", 1]
    assert f'"{text["B", 1]}"' in a2[1]["content"] and f'"{text["B", 2]}"' in a2[3]["content"]
    b2 = _request(store, store.get(LetterRow, pair.letter_id("B", 2)))["messages"]
    assert [m["role"] for m in b2] == ["system", "user", "assistant", "user"]
    assert b2[2]["content"] == text["B", 1] and f'"{text["A", 1]}"' in b2[3]["content"]
    assert text["A", 2] not in json.dumps(b2)  # B2 comes before A2: not yet written
    assert seat_a.position == 4 and store.get(LetterRow, pair.letter_id("B", 1)).position == 1


def test_steering_applies_to_the_steered_writers_own_letters_only(exchanged):
    _, pairs, profiles, store, _, _ = exchanged
    mixed = [p for p in pairs if p.profile_a != p.profile_b and "+" in p.condition]
    assert mixed
    for pair in [*mixed, *(p for p in pairs if p.condition == "two_unsteered")]:
        for seat, k in pair.order():
            letter = store.get(LetterRow, pair.letter_id(seat, k))
            expected = profiles[pair.profile(seat)].spec()
            assert _request(store, letter)["steer"] == expected
            assert (expected is None) == (pair.condition == "two_unsteered")
