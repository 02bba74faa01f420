"""Reading the lab's versioned TOML data files with errors that name the file, the field and
the fix. Every package reads its data through here."""

from __future__ import annotations

import hashlib
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypeVar

from foundation.errors import LabError

T = TypeVar("T")


def file_sha256(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def load_toml(path: Path) -> dict[str, Any]:
    path = Path(path)
    if not path.is_file():
        raise LabError("file not found", where=str(path), fix="check the path")
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise LabError(f"not valid TOML ({exc})", where=str(path), fix="fix the syntax") from exc
    except UnicodeDecodeError as exc:
        raise LabError("not UTF-8 text", where=str(path), fix="save the file as UTF-8") from exc


def table(data: Mapping[str, Any], key: str, where: str) -> dict[str, Any]:
    value = data.get(key)
    if not isinstance(value, dict):
        raise LabError(f"missing table [{key}]", where=where, fix=f"add a [{key}] table")
    return value


def field(data: Mapping[str, Any], key: str, kind: type[T], where: str, default: Any = ...) -> T:
    """A required (or defaulted) field of a given type; ints are accepted where floats are."""
    if key not in data:
        if default is ...:
            raise LabError(f"missing field '{key}'", where=where, fix=f"add {key} = ...")
        return default  # type: ignore[no-any-return,unused-ignore]
    value = data[key]
    ok = isinstance(value, kind) and not (kind is int and isinstance(value, bool))
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        value, ok = float(value), True
    if not ok:
        raise LabError(
            f"field '{key}' must be {kind.__name__}, got {type(value).__name__} ({value!r})",
            where=where,
            fix=f"set {key} to a {kind.__name__}",
        )
    return value  # type: ignore[no-any-return,unused-ignore]


def string_list(data: Mapping[str, Any], key: str, where: str, *, min_items: int = 0) -> list[str]:
    value = field(data, key, list, where)
    if not all(isinstance(v, str) and v.strip() for v in value):
        raise LabError(f"field '{key}' must be a list of non-empty strings", where=where)
    if len(value) < min_items:
        raise LabError(
            f"field '{key}' has {len(value)} items, needs at least {min_items}",
            where=where,
            fix=f"add {min_items - len(value)} more",
        )
    return list(value)
