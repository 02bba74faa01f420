"""Reading the lab's versioned TOML data files into typed schemas (pydantic), with one
translation of every validation error into the lab's one-line error: the file, the field, what is
wrong and the fix. Every package reads its data through here."""

from __future__ import annotations

import hashlib
import tomllib
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
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
)

from diarylab.foundation.error_words import duplicate_key, plain_words
from diarylab.foundation.errors import LabError, LabErrors

S = TypeVar("S", bound=BaseModel)
# Where data files are read from instead of where their names point: a report of a run folder
# reads the lab's data files from the folder's own copies (resolved source path → copy).
_READ_FROM: ContextVar[Mapping[Path, Path] | None] = ContextVar("read_from", default=None)
FIX_MARK = " — fix: "  # a validator's ValueError may carry its own fix after this mark


# An id that names files, run folders and table rows: letters, digits, '-', '_' and '.'.
Slug = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$", max_length=80)]
NonEmpty = Annotated[str, StringConstraints(min_length=1, pattern=r"\S")]


class At(ValueError):
    """A validator's error about a field below the one it validates: `loc` continues the
    location pydantic gives the validator (e.g. ("chatbots", 1, "id") from the model's root)."""

    def __init__(self, loc: tuple[int | str, ...], message: str) -> None:
        super().__init__(message)
        self.loc = loc


class DataModel(BaseModel):
    """Base of every data-file schema: immutable, unknown keys refused (a misspelt key is a
    mistake, not a default), and strict types (no "3" for 3, no true for 1)."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)


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


def lab_error(
    exc: ValidationError, data: Any, where: str, schema: type[BaseModel] | None = None
) -> LabError:
    """The first problem of a validation, with a count of the others."""
    errors = exc.errors(include_url=False)
    found = _one(errors[0], data, where, schema)
    more = f" ({len(errors) - 1} more problem(s) after this one)" if len(errors) > 1 else ""
    return LabError(found.message + more, where=found.where, fix=found.fix)


def lab_errors(
    exc: ValidationError, data: Any, where: str, schema: type[BaseModel] | None = None
) -> LabError:
    """Every problem of a validation, one per field (the tries of a union at one field are one
    problem): a LabErrors of several, or the one LabError alone."""
    problems: dict[str, _Problem] = {}
    for error in exc.errors(include_url=False):
        one = _one(error, data, where, schema)
        problems.setdefault(one.where, one)
    found = [LabError(p.message, where=p.where, fix=p.fix) for p in _misspellings(problems)]
    return found[0] if len(found) == 1 else LabErrors(found)


def _misspellings(problems: dict[str, _Problem]) -> list[_Problem]:
    """A required key written misspelt is one mistake, not a missing key and an unknown one:
    the two become one line at the missing key, naming the misspelling."""
    import difflib

    out = dict(problems)
    for at, missing in problems.items():
        if missing.kind != "missing":
            continue
        table, _, name = at.rpartition(".")
        unknown = {
            w.rpartition(".")[2]: w
            for w, p in out.items()
            if p.kind == "extra_forbidden" and w.rpartition(".")[0] == table
        }
        near = difflib.get_close_matches(name, list(unknown), n=1, cutoff=0.6)
        if near:
            del out[unknown[near[0]]]
            out[at] = _Problem(
                f"missing ({near[0]!r} is written instead: a misspelling?)",
                at,
                f"rename {near[0]} to {name}",
                "missing",
            )
    return list(out.values())


@dataclass(frozen=True)
class _Problem:
    message: str
    where: str
    fix: str
    kind: str = ""  # pydantic's error type


def _one(first: Any, data: Any, where: str, schema: type[BaseModel] | None) -> _Problem:
    loc = tuple(first["loc"])
    raised = (first.get("ctx") or {}).get("error")
    if isinstance(raised, At):  # a cross-field rule that knows which field is wrong
        loc += raised.loc
    path = field_path(loc, data)
    message = str(first["msg"]).removeprefix("Value error, ").removeprefix("Assertion failed, ")
    fix = None
    if FIX_MARK in message:
        message, fix = message.split(FIX_MARK, 1)
    kind = first["type"]
    name = path.rsplit(".", 1)[-1] if path else "value"
    if kind == "missing":
        message, fix = "missing", fix or f"add {name} = ..."
    elif kind == "union_tag_invalid":
        ctx = first.get("ctx") or {}
        path = f"{path}.{ctx.get('discriminator', 'kind')}".strip(".").replace("'", "")
        message = f"unknown kind {ctx.get('tag')!r}"
        fix = f"use one of {ctx.get('expected_tags')}"
    elif kind == "extra_forbidden":
        message = "unknown field"
        near = _closest(schema, data, first["loc"]) if schema else None
        fix = fix or (f"did you mean {near!r}?" if near else "remove it or correct its spelling")
    elif fix is None:
        got = first.get("input")
        said = plain_words(kind, first.get("ctx") or {}, name, got)
        if said is not None:
            message, fix = said
        else:
            if kind not in ("value_error", "assertion_error") and not isinstance(got, dict | list):
                message = f"{message} (got {got!r})"
            fix = f"correct {name} (`diarylab design schema` lists each field's type and range)"
    return _Problem(message, f"{where} {path}".strip(), fix or "", kind)


def field_path(loc: Sequence[int | str], data: Any) -> str:
    """A readable path to the field, following the input data so that the tags pydantic puts
    into the location of a tagged union (which are not keys of the file) are left out."""
    parts: list[str] = []
    node = data
    tagged = None
    for item in loc:
        if isinstance(node, dict) and item == node.get("kind") and tagged is not node:
            tagged = node  # the tag pydantic puts into a tagged union's location, not a key
            continue
        if isinstance(item, int) and isinstance(node, list) and 0 <= item < len(node):
            parts.append(f"[{item}]")
            node = node[item]
        elif isinstance(item, str) and isinstance(node, dict) and item in node:
            parts.append(f".{item}" if parts else item)
            node = node[item]
        elif isinstance(item, str) and isinstance(node, dict) and item not in _tags(node):
            parts.append(f".{item}" if parts else item)  # a missing or unknown key
            node = None
    return "".join(parts)


def _tags(node: Mapping[str, Any]) -> set[str]:
    return {str(v) for k, v in node.items() if k in ("kind", "type") and isinstance(v, str)}


def _closest(schema: type[BaseModel], data: Any, loc: Sequence[int | str]) -> str | None:
    """The known field name nearest to an unknown one: the fields of the schema's models that
    fit the table the unknown key sits in (they share one of its other keys)."""
    import difflib

    node = data
    tagged = None
    for item in loc[:-1]:
        if isinstance(node, dict) and item == node.get("kind") and tagged is not node:
            tagged = node  # a tagged union's tag, not a key
        else:
            node = _child(node, item)
    if not isinstance(node, dict) or not isinstance(loc[-1], str):
        return None
    unknown, siblings = loc[-1], set(node) - {loc[-1]}
    names: set[str] = set()
    for model in _models(schema):
        fields = set(model.model_fields)
        if model is schema and len(loc) == 1 or fields & siblings:
            names |= fields
    if not names:  # nothing else in the table to go by: any field of the schema
        names = {name for model in _models(schema) for name in model.model_fields}
    found = difflib.get_close_matches(unknown, sorted(names - siblings), n=1, cutoff=0.6)
    return found[0] if found else None


def _models(schema: type[BaseModel]) -> list[type[BaseModel]]:
    import typing

    seen: list[type[BaseModel]] = []
    todo = [schema]
    while todo:
        model = todo.pop()
        if model in seen:
            continue
        seen.append(model)
        for info in model.model_fields.values():
            stack = [info.annotation]
            while stack:
                ann = stack.pop()
                if isinstance(ann, type) and issubclass(ann, BaseModel):
                    todo.append(ann)
                stack += [a for a in typing.get_args(ann) if a is not Ellipsis]
    return seen


def _child(node: Any, item: int | str) -> Any:
    if isinstance(node, dict) and item in node:
        return node[item]
    if isinstance(node, list) and isinstance(item, int) and 0 <= item < len(node):
        return node[item]
    return node
