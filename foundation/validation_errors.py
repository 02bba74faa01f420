"""Every pydantic validation error of a data file or design translated into the lab's one-line
error: the file, the field (a readable path, following the data's own tags), what is wrong in
plain words (foundation/error_words.py) and the fix; a misspelt key named as such. Split from
foundation/datafiles.py, which reads and validates the files."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ValidationError

from diarylab.foundation.error_words import plain_words
from diarylab.foundation.errors import LabError, LabErrors

FIX_MARK = " — fix: "  # a validator's ValueError may carry its own fix after this mark


class At(ValueError):
    """A validator's error about a field below the one it validates: `loc` continues the
    location pydantic gives the validator (e.g. ("chatbots", 1, "id") from the model's root)."""

    def __init__(self, loc: tuple[int | str, ...], message: str) -> None:
        super().__init__(message)
        self.loc = loc


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
    for model in models_of(schema):
        fields = set(model.model_fields)
        if model is schema and len(loc) == 1 or fields & siblings:
            names |= fields
    if not names:  # nothing else in the table to go by: any field of the schema
        names = {name for model in models_of(schema) for name in model.model_fields}
    found = difflib.get_close_matches(unknown, sorted(names - siblings), n=1, cutoff=0.6)
    return found[0] if found else None


def models_of(schema: type[BaseModel]) -> list[type[BaseModel]]:
    """The schema and every model its fields can hold (through lists, unions, Annotated)."""
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
