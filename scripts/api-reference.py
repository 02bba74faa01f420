"""Writes docs/api.md from the docstrings of what the package root exports (diarylab.__all__):
each name's signature and docstring, and a class's public methods. `--print` prints it instead
(tests/test_docs.py compares the file with it). Run: .venv/bin/python scripts/api-reference.py"""

from __future__ import annotations

import inspect
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HEAD = """# API

What a notebook or a script imports from `diarylab` (`import diarylab`; each name is loaded on
first use, so the import stays light). Everything else in the package is the lab's own and may
move. Written by `scripts/api-reference.py` from the docstrings; do not edit by hand.
"""


def _signature(obj: object) -> str:
    try:
        return str(inspect.signature(obj))  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return "(...)"


def _doc(obj: object) -> str:
    return inspect.cleandoc(inspect.getdoc(obj) or "(no docstring)")


def _methods(cls: type) -> list[str]:
    out = []
    for name, member in inspect.getmembers(cls):
        if name.startswith("_") or name not in cls.__dict__:
            continue
        if isinstance(member, property):
            out += [f"#### `.{name}`", "", _doc(member), ""]
        elif inspect.isfunction(member):
            out += [f"#### `.{name}{_signature(member)}`", "", _doc(member), ""]
    return out


def api_markdown() -> str:
    import diarylab

    lines = [HEAD]
    for name in sorted(n for n in diarylab.__all__ if not n.startswith("_")):
        obj = getattr(diarylab, name)
        module = getattr(obj, "__module__", "diarylab")
        if inspect.isclass(obj):
            lines += [f"## `{name}`", "", f"class, from `{module}`", "", _doc(obj), ""]
            lines += _methods(obj)
        else:
            lines += [f"## `{name}{_signature(obj)}`", "", f"from `{module}`", "", _doc(obj), ""]
    return "\n".join(lines).rstrip() + "\n"


def main() -> None:
    sys.path.insert(0, str(ROOT))
    text = api_markdown()
    if "--print" in sys.argv:
        print(text, end="")
    else:
        (ROOT / "docs" / "api.md").write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
