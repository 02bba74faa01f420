"""The store's one cached-call door: stored results come back without a call, the rest are
computed, stored with their rows all-or-nothing per batch, and returned as a resume would read
them; keys ignore transport settings; stores of an older schema are refused."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import pytest

from diarylab.experiments.engine.store import Store, call_key
from diarylab.foundation.errors import LabError


@dataclass(frozen=True)
class NoteRow:
    TABLE: ClassVar[str] = "notes"
    note_id: str
    text: str
    score: float | None
    call_key: str


def door(store, requests, compute, batch_size=2):
    return store.cached_calls(
        "chatbot",
        "fake",
        {"model": "fake-1"},
        requests,
        compute,
        rows=lambda i, result, key: (NoteRow(f"n{i}", result["text"], None, key),),
        batch_size=batch_size,
    )


def echo(requests, calls):
    def compute(indices):
        calls.append(list(indices))
        return [{"text": requests[i]["say"].upper()} for i in indices]

    return compute


def test_computes_the_missing_stores_them_and_reads_them_back(tmp_path):
    store = Store(tmp_path / "s.sqlite", (NoteRow,))
    requests = [{"say": w} for w in ("a", "b", "c")]
    calls: list[list[int]] = []
    assert door(store, requests, echo(requests, calls)) == [{"text": t} for t in "ABC"]
    assert calls == [[0, 1], [2]] and store.made == 3 and store.count("notes") == 3
    more = [*requests, {"say": "d"}]
    calls.clear()
    assert [r["text"] for r in door(store, more, echo(more, calls))] == list("ABCD")
    assert calls == [[3]] and store.cached == 3


def test_a_failing_batch_stores_nothing_of_itself_and_keeps_earlier_batches(tmp_path):
    store = Store(tmp_path / "s.sqlite", (NoteRow,))
    requests = [{"say": w} for w in ("a", "b", "c", "d")]

    def compute(indices):
        if 2 in indices:
            raise RuntimeError("server went away")
        return [{"text": requests[i]["say"]} for i in indices]

    with pytest.raises(RuntimeError):
        door(store, requests, compute)
    assert store.count("calls") == 2 and store.count("notes") == 2  # the first batch only


def test_the_same_request_twice_is_computed_once_and_serves_both_rows(tmp_path):
    store = Store(tmp_path / "s.sqlite", (NoteRow,))
    requests = [{"say": "same"}, {"say": "same"}, {"say": "other"}]
    calls: list[list[int]] = []
    out = door(store, requests, echo(requests, calls), batch_size=10)
    assert calls == [[0, 2]] and out[0] == out[1] == {"text": "SAME"}
    assert store.count("notes") == 3 and store.count("calls") == 2


def test_keys_hold_identity_and_request_only():
    request = {"messages": [["user", "hi"]], "generation": {"max_new_tokens": 5}}
    key = call_key("chatbot", {"model": "m"}, request)
    assert key == call_key("chatbot", {"model": "m"}, dict(reversed(list(request.items()))))
    assert key != call_key("chatbot", {"model": "m2"}, request)
    assert key != call_key("judge", {"model": "m"}, request)


def test_a_store_of_an_older_schema_is_refused(tmp_path):
    # A store as the lab wrote it before stores recorded their schema: a calls table, no meta.
    path = tmp_path / "old.sqlite"
    shutil.copyfile(
        Path(__file__).resolve().parents[2] / "data" / "store-before-schema-versions.sqlite", path
    )
    with pytest.raises(LabError, match="older diarylab") as caught:
        Store(path)
    assert "new folder" in str(caught.value)


def test_a_store_of_a_later_schema_is_refused_as_later(tmp_path):
    path = tmp_path / "later.sqlite"
    store = Store(path)
    store.update("meta", {"value": "9"}, where={"key": "schema_version"})
    store.close()
    with pytest.raises(LabError, match="later diarylab") as caught:
        Store(path)
    assert "upgrade diarylab" in str(caught.value)


def test_rows_are_changed_by_hand_only_through_named_columns(tmp_path):
    """The store's edits (what a test does to play a user who edited a store): names checked
    against the schema, values bound, the count of rows changed returned."""
    store = Store(tmp_path / "s.sqlite", (NoteRow,))
    store.put_rows(NoteRow("a", "one", None, "k1"), NoteRow("b", "two", None, "k2"))
    assert store.update("notes", {"text": "edited"}, where={"note_id": "a"}) == 1
    assert store.select("notes", ["text"], order_by=["note_id"]) == [("edited",), ("two",)]
    assert store.delete("notes", like={"note_id": "b%"}) == 1 and store.count("notes") == 1
    with pytest.raises(KeyError, match="no column 'text; DROP'"):
        store.update("notes", {"text; DROP": "x"})
    with pytest.raises(KeyError, match="no table"):
        store.delete("nothing")
    store.close()
