"""Reading a data file through a schema: every validation problem becomes one LabError that names
the file, the field (with list positions), what is wrong and how to fix it."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Annotated, Literal

import pytest
from pydantic import Field, field_validator

from diarylab.foundation.datafiles import DataModel, HashedDataFile, load_data, validate
from diarylab.foundation.errors import LabError


class Local(DataModel):
    kind: Literal["local"]
    folder: str


class Served(DataModel):
    kind: Literal["served"]
    url: str


class Item(DataModel):
    name: str
    weight: float = 1.0


class Settings(DataModel):
    name: str
    seeds: int
    items: list[Item] = []
    model: Annotated[Local | Served, Field(discriminator="kind")] | None = None

    @field_validator("name")
    @classmethod
    def _lower_case(cls, value: str) -> str:
        if value != value.lower():
            raise ValueError(f"name {value!r} has capitals — fix: write it as {value.lower()!r}")
        return value


def error(data: object) -> LabError:
    with pytest.raises(LabError) as caught:
        validate(Settings, data, "settings.toml")
    return caught.value


def test_valid_data_becomes_the_model():
    got = validate(
        Settings, {"name": "a", "seeds": 2, "model": {"kind": "served", "url": "u"}}, "f"
    )
    assert got.seeds == 2 and isinstance(got.model, Served) and got.model.url == "u"


def test_missing_field():
    err = error({"name": "a"})
    assert str(err).startswith("settings.toml seeds: missing")
    assert err.where == "settings.toml seeds" and err.fix == "add seeds = ..."


def test_wrong_type_names_what_was_given():
    err = error({"name": "a", "seeds": "3"})
    assert err.where == "settings.toml seeds"
    assert '(got "3")' in str(err) and "must be a whole number" in str(err)
    assert err.fix == "write it as a whole number (without quotes), e.g. seeds = 3"


def test_strict_types_refuse_a_bool_for_an_int():
    assert error({"name": "a", "seeds": True}).where == "settings.toml seeds"


def test_unknown_field_is_refused():
    err = error({"name": "a", "seeds": 1, "sedes": 2})
    assert err.where == "settings.toml sedes" and "unknown field" in str(err)
    assert err.fix is not None and "spelling" in err.fix


def test_unknown_kind_of_a_tagged_union():
    err = error({"name": "a", "seeds": 1, "model": {"kind": "remote", "url": "u"}})
    assert err.where == "settings.toml model.kind"
    assert "unknown kind 'remote'" in str(err)
    assert err.fix is not None and "local" in err.fix and "served" in err.fix


def test_a_field_inside_a_tagged_union_leaves_the_tag_out_of_the_path():
    err = error({"name": "a", "seeds": 1, "model": {"kind": "local"}})
    assert err.where == "settings.toml model.folder" and "missing" in str(err)


def test_a_validator_gives_its_own_fix():
    err = error({"name": "Alpha", "seeds": 1})
    assert err.where == "settings.toml name"
    assert "has capitals" in str(err) and err.fix == "write it as 'alpha'"
    assert "Value error" not in str(err)


def test_a_list_index_is_in_the_path():
    err = error({"name": "a", "seeds": 1, "items": [{"name": "x"}, {"name": "y", "weight": "9"}]})
    assert err.where == "settings.toml items[1].weight"


def test_more_problems_are_counted_not_listed():
    err = error({"name": 1, "seeds": "x"})
    assert err.where == "settings.toml name" and "1 more problem(s)" in str(err)


def test_a_file_is_named_in_the_message(tmp_path: Path):
    path = tmp_path / "mine.toml"
    path.write_text('name = "a"\nseeds = 1\n[[items]]\nname = "x"\ncolour = 1\n', encoding="utf-8")
    with pytest.raises(LabError) as caught:
        load_data(path, Settings)
    message = str(caught.value)
    assert message.startswith(f"{path} items[0].colour: unknown field")
    assert "fix:" in message and "\n" not in message


def test_a_good_file_gives_model_and_raw_table(tmp_path: Path):
    path = tmp_path / "mine.toml"
    path.write_text('name = "a"\nseeds = 1\n', encoding="utf-8")
    model, raw = load_data(path, Settings)
    assert model.seeds == 1 and raw == {"name": "a", "seeds": 1}


def test_unreadable_files_are_lab_errors(tmp_path: Path):
    with pytest.raises(LabError, match="file not found"):
        load_data(tmp_path / "absent.toml", Settings)
    broken = tmp_path / "broken.toml"
    broken.write_text("name = \n", encoding="utf-8")
    with pytest.raises(LabError, match="not valid TOML"):
        load_data(broken, Settings)


class Note(HashedDataFile):
    """A data file that is one `[note]` table."""

    file_table = "note"

    id: str
    text: str


class Whole(HashedDataFile):
    """A data file whose schema is the whole file."""

    name: str


def test_a_hashed_file_records_the_hash_and_path_of_its_bytes(tmp_path: Path):
    path = tmp_path / "note.toml"
    path.write_bytes(b'[note]\nid = "n"\ntext = "hello"\n')
    note = Note.from_file(path)
    assert (note.id, note.text, note.path) == ("n", "hello", path)
    assert note.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
    whole = Whole.from_file(_write(tmp_path / "whole.toml", 'name = "w"\n'))
    assert whole.name == "w" and len(whole.sha256) == 64
    # One built in code was read from no file: no hash to record.
    assert Note(id="x", text="y").sha256 == ""


def test_a_hashed_table_is_named_as_the_file_spells_it(tmp_path: Path):
    path = _write(tmp_path / "note.toml", '[note]\nid = "n"\ntext = 3\n')
    with pytest.raises(LabError) as caught:
        Note.from_file(path)
    assert str(caught.value).startswith(f"{path} note.text:")
    missing = _write(tmp_path / "empty.toml", 'id = "n"\n')
    with pytest.raises(LabError) as caught:
        Note.from_file(missing)
    assert caught.value.where == f"{missing} note" and "missing" in str(caught.value)


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path
