"""What a schema's refusal says in the lab's words: pydantic's error type and context turned into
one message and a concrete fix — for a range, the allowed range and a value inside it; for a
type, the value written the right way; for a list, what one with enough items looks like.
(foundation/datafiles.py reports every refusal through here.)"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

EXAMPLES = {  # a value of each type, written as TOML writes it
    "int": "3",
    "float": "0.5",
    "bool": "true",
    "str": '"text"',
    "list": '["..."]',
    "dict": "{ ... }",
}
TYPE_WORDS = {
    "int": "a whole number",
    "float": "a number",
    "bool": "true or false",
    "str": "text in quotes",
    "list": "a list in [ ]",
    "dict": "a table",
}
_TYPE_OF_KIND = {
    "int_parsing": "int",
    "int_type": "int",
    "int_from_float": "int",
    "float_parsing": "float",
    "float_type": "float",
    "bool_parsing": "bool",
    "bool_type": "bool",
    "string_type": "str",
    "list_type": "list",
    "tuple_type": "list",
    "dict_type": "dict",
    "model_type": "dict",
    "model_attributes_type": "dict",
}


def _toml(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f'"{value}"'
    return f"{value:g}" if isinstance(value, float) else str(value)


def plain_words(kind: str, ctx: Mapping[str, Any], name: str, got: Any) -> tuple[str, str] | None:
    """(message, fix) for a refusal of type `kind` of field `name` that was given `got`; None
    where pydantic's own message is kept."""
    shown = "" if isinstance(got, dict | list) else f" (got {_toml(got)})"
    if kind in ("greater_than_equal", "greater_than", "less_than_equal", "less_than"):
        bound = ctx.get({"greater_than_equal": "ge", "greater_than": "gt",
                         "less_than_equal": "le", "less_than": "lt"}[kind])  # fmt: skip
        words = {
            "greater_than_equal": "at least",
            "greater_than": "more than",
            "less_than_equal": "at most",
            "less_than": "less than",
        }[kind]
        if bound is None:
            return None
        step = 1 if isinstance(bound, int) else 0.1  # a value just inside an open bound
        inside: Any = bound
        if kind == "greater_than":
            inside = bound + step
        elif kind == "less_than":
            inside = bound - step
        percent = isinstance(got, int | float) and not isinstance(got, bool) and 1 < got <= 100
        if kind == "less_than_equal" and bound == 1 and percent:  # 50 meant 0.5
            return (
                f"must be at most 1{shown}: it is a share, not a percentage",
                f"write it as a share, e.g. {name} = {_toml(float(got / 100))} for {got:g} %",
            )
        return (
            f"must be {words} {_toml(bound)}{shown}",
            f"set {name} to a value {words} {_toml(bound)}, e.g. {name} = {_toml(inside)}",
        )
    if kind in _TYPE_OF_KIND:
        t = _TYPE_OF_KIND[kind]
        how = " (without quotes)" if t in ("int", "float", "bool") else ""
        return (
            f"must be {TYPE_WORDS[t]}{shown}",
            f"write it as {TYPE_WORDS[t]}{how}, e.g. {name} = {EXAMPLES[t]}",
        )
    if kind == "too_short":
        least = ctx.get("min_length", 1)
        many = "item" if least == 1 else "items"
        return (
            f"needs at least {least} {many} (got {ctx.get('actual_length', 0)})",
            f"list at least {least}, e.g. {name} = {EXAMPLES['list']}",
        )
    if kind == "too_long":
        most = ctx.get("max_length")
        return (
            f"holds at most {most} items (got {ctx.get('actual_length')})",
            f"keep {most} or fewer in {name}",
        )
    if kind == "literal_error":
        return (f"must be one of {ctx.get('expected')}{shown}", f"use one of {ctx.get('expected')}")
    if kind == "string_too_short":
        return ("must not be empty", f"write it, e.g. {name} = {EXAMPLES['str']}")
    if kind == "finite_number":
        return (f"must be a finite number{shown}", f"e.g. {name} = {EXAMPLES['float']}")
    return None


def duplicate_key(message: str) -> tuple[str, str] | None:
    """A TOML key given twice (tomllib: "Cannot overwrite a value", "Cannot declare ... twice"),
    said as such."""
    if "Cannot overwrite" in message or "twice" in message:
        return (
            f"a key or table is given twice ({message})",
            "keep one of the two (a TOML table holds each key once)",
        )
    return None
