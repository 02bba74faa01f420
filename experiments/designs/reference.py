"""The design reference (docs/designs.md), generated from the kinds' typed schemas, so it cannot
drift from what `design check` accepts: every field of every kind, with its type, default and
the description the schema gives it. `diarylab design reference` prints it; a test holds the
file to it and fails on any field without a description."""

from __future__ import annotations

import types
import typing
from collections.abc import Iterator
from typing import Any

from pydantic import BaseModel
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from diarylab.experiments.kinds import get_kind, kind_names

HEAD = """# Designs

Every field a design file may set, by experiment kind, generated from the typed schemas (the
same ones `diarylab design check` validates against; `diarylab design schema --kind KIND` gives
them as JSON Schema for editors). A dotted path names a field inside a table: `design.seed` is
`seed` under `[design]`; `judges[]` is each `[[judges]]` table (its `kind` says which fields
apply). Remade by `diarylab design reference > docs/designs.md`.
"""


def _models(annotation: Any) -> list[type[BaseModel]]:
    """The schema models an annotation holds (through Optional, list, Union, Annotated)."""
    out: list[type[BaseModel]] = []
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    for arg in typing.get_args(annotation):
        for model in _models(arg):
            if model not in out:
                out.append(model)
    return out


def _is_list(annotation: Any) -> bool:
    origin = typing.get_origin(annotation)
    if origin in (list, tuple):
        return True
    if origin in (typing.Union, types.UnionType, typing.Annotated):
        return any(_is_list(a) for a in typing.get_args(annotation))
    return False


def type_name(annotation: Any) -> str:
    if annotation is None or annotation is type(None):
        return "none"
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is typing.Annotated:
        return type_name(args[0])
    if origin in (typing.Union, types.UnionType):
        return " or ".join(dict.fromkeys(type_name(a) for a in args))
    if origin is typing.Literal:
        return " | ".join(f'"{a}"' if isinstance(a, str) else str(a) for a in args)
    if origin in (list, tuple):
        return f"list of {type_name(args[0])}" if args else "list"
    if origin is dict:
        return "table"
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return "table"
    return {int: "integer", float: "number", str: "text", bool: "true/false"}.get(
        annotation, getattr(annotation, "__name__", str(annotation))
    )


def _default(field: FieldInfo) -> str:
    if field.is_required():
        return "required"
    value = field.default
    if value is PydanticUndefined:
        return "(computed)"
    if isinstance(value, BaseModel):
        return "(its defaults)"
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f'"{value}"'
    return str(value).replace("|", "\\|")


def fields(model: type[BaseModel], prefix: str = "") -> Iterator[tuple[str, str, str, str]]:
    """(path, type, default, description) of every field, depth first."""
    for name, field in model.model_fields.items():
        path = f"{prefix}{name}"
        yield path, type_name(field.annotation), _default(field), field.description or ""
        nested = _models(field.annotation)
        many = _is_list(field.annotation)
        for sub in nested:
            kind = sub.model_fields.get("kind")
            tag = ""
            if len(nested) > 1 and kind is not None:
                tag = f" ({type_name(kind.annotation)})"
            yield from fields(sub, f"{path}{'[]' if many else ''}{tag}.")


def reference_markdown() -> str:
    out = [HEAD]
    for name in kind_names():
        schema = get_kind(name, where="design reference").schema
        out.append(f'## kind = "{name}"\n')
        doc = (schema.__doc__ or "").strip().split("\n\n")[0].replace("\n", " ")
        if doc:
            out.append(doc + "\n")
        out.append("| field | type | default | what it is |")
        out.append("|---|---|---|---|")
        for path, kind, default, description in fields(schema):
            cells = [f"`{path}`", kind, default, description]
            out.append(
                "| " + " | ".join(c.replace("\n", " ").replace("|", "\\|") for c in cells) + " |"
            )
        out.append("")
    return "\n".join(out)
