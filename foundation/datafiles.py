"""Reading the lab's versioned TOML data files into typed schemas (pydantic), with one
translation of every validation error into the lab's one-line error: the file, the field, what is
wrong and the fix (foundation/validation_errors.py). Every package reads its data through here."""

from __future__ import annotations

import hashlib
import tomllib
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from functools import cache
from pathlib import Path
from typing import Annotated, Any, ClassVar, Self, TypeVar

from pydantic import (
    BaseModel,
    ConfigDict,
    PrivateAttr,
    StringConstraints,
    ValidationError,
    create_model,
    model_validator,
)

from diarylab.foundation.error_words import duplicate_key
from diarylab.foundation.errors import LabError
from diarylab.foundation.validation_errors import FIX_MARK as FIX_MARK  # the data files' names
from diarylab.foundation.validation_errors import At as At
from diarylab.foundation.validation_errors import lab_error, lab_errors

S = TypeVar("S", bound=BaseModel)
# Where data files are read from instead of where their names point: a report of a run folder
# reads the lab's data files from the folder's own copies (resolved source path → copy).
_READ_FROM: ContextVar[Mapping[Path, Path] | None] = ContextVar("read_from", default=None)


# An id that names files, run folders and table rows: letters, digits, '-', '_' and '.'.
Slug = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$", max_length=80)]
NonEmpty = Annotated[str, StringConstraints(min_length=1, pattern=r"\S")]


class DataModel(BaseModel):
    """Base of every data-file schema: immutable, unknown keys refused (a misspelt key is a
    mistake, not a default), and strict types (no "3" for 3, no true for 1)."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    @model_validator(mode="before")
    @classmethod
    def _partial_tables_keep_their_defaults(cls, data: Any) -> Any:
        """A table written in part keeps its field's default for what it leaves out: where a
        field defaults to `{ max_new_tokens = 300, temperature = 0.9 }`, writing `{
        max_new_tokens = 400 }` keeps temperature 0.9 (not the settings type's own 0.0), so a
        field has one default wherever it is written."""
        if not isinstance(data, dict):
            return data
        out = dict(data)
        for name, field in cls.model_fields.items():
            key = field.alias or name
            given, default = out.get(key), field.default
            if isinstance(given, dict) and isinstance(default, BaseModel):
                own = default.model_dump(by_alias=True, exclude_defaults=True)
                out[key] = {**own, **given}
        return out


class HashedDataFile(DataModel):
    """A data file's schema whose instances know the sha256 and path of the file they were read
    from (what manifests, inputs.json and cache keys record), set by `from_file` alone.

    `file_table` names the one top-level table the schema is (a role card is the file's
    `[card]`); None: the schema is the whole file."""

    file_table: ClassVar[str | None] = None
    _sha256: str = PrivateAttr(default="")
    _path: Path = PrivateAttr(default=Path())

    @property
    def sha256(self) -> str:
        """The hash of the file's bytes; empty for one built in code, not read from a file."""
        return self._sha256

    @property
    def path(self) -> Path:
        return self._path

    @classmethod
    def from_file(cls, path: Path, context: Mapping[str, Any] | None = None) -> Self:
        """The file read and validated (one LabError naming the file and field otherwise), with
        the file's sha256 and path recorded."""
        path = Path(path)
        raw = load_toml(path)
        if cls.file_table is None:
            found = validate(cls, raw, str(path), context)
        else:
            # Validated inside its table, so errors name the field as the file spells it
            # ("card.age") and a missing or misspelt table is refused like any other field.
            whole = validate(_file_of(cls, cls.file_table), raw, str(path), context)
            found = getattr(whole, cls.file_table)
        found._sha256 = file_sha256(path)
        found._path = path
        return found


@cache
def _file_of(schema: type[HashedDataFile], table: str) -> type[DataModel]:
    """The schema of a file holding `schema` as its one table `[table]`."""
    fields: dict[str, Any] = {table: (schema, ...)}
    return create_model(f"{schema.__name__}File", __base__=DataModel, **fields)


@contextmanager
def reading_from(copies: Mapping[Path, Path]) -> Iterator[None]:
    """Within this, a data file named by one of `copies`' sources is read (and hashed) from its
    copy; its name (`.path`, what errors say) stays the source's."""
    token = _READ_FROM.set({Path(k).resolve(): Path(v) for k, v in copies.items()})
    try:
        yield
    finally:
        _READ_FROM.reset(token)


def located(path: Path) -> Path:
    """The file actually read for `path`: its copy inside `reading_from`, else itself."""
    copies = _READ_FROM.get()
    return copies.get(Path(path).resolve(), Path(path)) if copies else Path(path)


def file_sha256(path: Path) -> str:
    return hashlib.sha256(located(path).read_bytes()).hexdigest()


def load_toml(path: Path) -> dict[str, Any]:
    path = located(Path(path))
    if path.is_dir():
        raise LabError("is a folder, not a file", where=str(path), fix="name the .toml file")
    if not path.is_file():
        raise LabError("file not found", where=str(path), fix="check the path")
    try:
        # utf-8-sig: a byte-order mark some editors write is not a mistake worth refusing.
        return tomllib.loads(path.read_text(encoding="utf-8-sig"))
    except tomllib.TOMLDecodeError as exc:
        twice = duplicate_key(str(exc))
        if twice is not None:
            raise LabError(twice[0], where=str(path), fix=twice[1]) from exc
        raise LabError(
            f"not valid TOML ({exc})",
            where=str(path),
            fix="fix the syntax at that line (strings in quotes, lists in [ ], one key = value "
            "per line)",
        ) from exc
    except UnicodeDecodeError as exc:
        raise LabError("not UTF-8 text", where=str(path), fix="save the file as UTF-8") from exc


def validate(
    schema: type[S],
    data: Any,
    where: str,
    context: Mapping[str, Any] | None = None,
    *,
    every: bool = False,
) -> S:
    """`data` as `schema`, or one LabError naming `where` and the first offending field (every:
    a LabErrors naming each offending field, as a design check tells them all)."""
    try:
        return schema.model_validate(data, context=dict(context or {}))
    except ValidationError as exc:
        report = lab_errors if every else lab_error
        raise report(exc, data, where, schema) from None


def load_data(
    path: Path, schema: type[S], context: Mapping[str, Any] | None = None
) -> tuple[S, dict[str, Any]]:
    """A TOML file read and validated as `schema`; returns the model and the raw table."""
    raw = load_toml(path)
    return validate(schema, raw, str(path), context), raw
