"""The store side of derived runs: the texts hash changes with a text and only with a text; a
copy carries every call and text row and records itself once; a sealed store reads its calls
and refuses to make one; the text view of a design keeps what made the texts and nothing else."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import pytest

from diarylab.experiments.designs.opening import load_design
from diarylab.experiments.engine.reuse import (
    copy_texts,
    first_difference,
    reused_record,
    store_texts,
    text_view,
)
from diarylab.experiments.engine.store import Store
from diarylab.foundation.errors import LabError
from diarylab.testing.lab_fixtures import design_text


@dataclass(frozen=True)
class NoteRow:
    TABLE: ClassVar[str] = "notes"
    note_id: str
    text: str
    call_key: str


def ask(store: Store, kind: str, texts: list[str], made: list[int]) -> list[dict]:
    def compute(indices: list[int]) -> list[dict]:
        made.extend(indices)
        return [{"text": texts[i]} for i in indices]

    return store.cached_calls(
        kind,
        "fake",
        {"model": "fake-1"},
        [{"prompt": t} for t in texts],
        compute,
        rows=(lambda i, r, key: (NoteRow(f"{kind}{i}", r["text"], key),))
        if kind != "judge"
        else None,
    )


CALLS = ("diarist",)  # the toy kind's text calls: its notes are written by "diarist" calls


def test_the_texts_hash_follows_the_texts_and_ignores_judge_calls(tmp_path):
    store = Store(tmp_path / "store.sqlite", (NoteRow,))
    ask(store, "diarist", ["a", "b"], [])
    store.close()
    before = store_texts(tmp_path / "store.sqlite", (NoteRow,), CALLS)
    assert before.calls == 2 and before.rows == {"notes": 2}

    store = Store(tmp_path / "store.sqlite", (NoteRow,))
    ask(store, "judge", ["read a"], [])  # a judgment added later: the texts are the same
    store.close()
    assert store_texts(tmp_path / "store.sqlite", (NoteRow,), CALLS) == before

    store = Store(tmp_path / "store.sqlite", (NoteRow,))
    store.update("notes", {"text": "edited"}, where={"note_id": "diarist0"})
    store.close()
    assert store_texts(tmp_path / "store.sqlite", (NoteRow,), CALLS).sha256 != before.sha256


def test_a_copy_is_complete_recorded_once_and_sealed_stores_refuse_new_calls(tmp_path):
    source = Store(tmp_path / "source.sqlite", (NoteRow,))
    ask(source, "diarist", ["a", "b"], [])
    ask(source, "judge", ["read a"], [])
    source.close()
    texts = store_texts(tmp_path / "source.sqlite", (NoteRow,), CALLS)
    record = {"run": "source", "texts_sha256": texts.sha256}

    store = Store(tmp_path / "derived.sqlite", (NoteRow,))
    assert reused_record(store) is None
    copied = copy_texts(tmp_path / "source.sqlite", store, (NoteRow,), CALLS, record)
    assert copied == texts and reused_record(store) == record
    assert store.count("calls") == 3  # the judge's call too: a shared judge reads from it
    store.sealed = frozenset({"diarist"})
    made: list[int] = []
    assert [r["text"] for r in ask(store, "diarist", ["a", "b"], made)] == ["a", "b"]
    assert made == [] and store.made == 0
    with pytest.raises(LabError, match="derived run found 1 diarist call"):
        ask(store, "diarist", ["a", "c"], made)
    assert made == [] and store.count("calls") == 3
    ask(store, "judge", ["read b"], made)  # judges are not sealed
    assert made == [0]

    # A copy that does not hash to the lock leaves nothing behind.
    other = Store(tmp_path / "other.sqlite", (NoteRow,))
    with pytest.raises(LabError, match="copy of the reused texts differs"):
        copy_texts(tmp_path / "source.sqlite", other, (NoteRow,), CALLS, {"texts_sha256": "0" * 64})
    assert other.count("calls") == 0 and reused_record(other) is None
    other.close()
    store.close()


def test_the_text_view_keeps_what_made_the_texts(tmp_path, tiny_model_folder):
    text = design_text(tiny_model_folder, None)
    path = tmp_path / "a.toml"
    path.write_text(text)
    base = text_view(load_design(path).spec)
    assert "judges" not in base and "scores" not in base and "analysis" not in base
    assert "name" not in base["design"] and base["design"]["seed"] == 7
    assert "batch_size" not in base["diarist_model"]["local"]

    def view(old: str, new: str) -> dict:
        assert old in text
        path.write_text(text.replace(old, new))
        return text_view(load_design(path).spec)

    # What judges or reaches a model may change; what writes may not.
    assert view('name = "tiny-test"', 'name = "other"') == base
    assert view("resamples = 200", "resamples = 300") == base
    assert view("local = { batch_size = 3 }", "local = { batch_size = 5 }") == base
    assert view('patterns = ["social_isolation"]', 'patterns = ["entitlement"]') == base
    changed = view("max_new_tokens = 8", "max_new_tokens = 9")
    assert first_difference(base, changed) == "diarist_model.generation.max_new_tokens"
    changed = view("temperature = 0.7", "temperature = 0.5")
    assert first_difference(base, changed) == "chatbots[1].generation.temperature"


def test_first_difference_names_the_first_place_two_values_differ():
    assert first_difference({"a": [1, {"b": 2}]}, {"a": [1, {"b": 2}]}) is None
    assert first_difference({"a": [1, {"b": 2}]}, {"a": [1, {"b": 3}]}) == "a[1].b"
    assert first_difference({"a": [1]}, {"a": [1, 2]}) == "a"
    assert first_difference({"a": 1}, {"a": 1, "c": 2}) == "c"
