"""The lab's packages, their layers and their imports as the architecture tests read them
(tests/test_layers.py, tests/test_house_rules.py): where each package sits, every lab import of a
file (inside functions too) and each module's dotted name."""

from __future__ import annotations

import ast
from pathlib import Path

# the repository (resolved: this module is imported through the link diarylab/testing)
ROOT = Path(__file__).resolve().parents[1]
LAYER = {
    "foundation": 0,
    "model_access": 1,
    "steering": 2,
    "diarists": 2,
    "chatbots": 2,
    "rubric": 2,
    "experiments": 3,
    "testing": 4,  # the tests' and benches' builders and stand-ins: above the whole lab
}
SIDEWAYS = {("diarists", "steering")}  # the only import allowed inside one layer


EXPANDED = (
    "diarylab",
    "diarylab.experiments",
    "diarylab.experiments.kinds",
    "diarylab.experiments.analysis",
)


def imported_modules(path: Path) -> list[tuple[int, str]]:
    """(line, dotted module under diarylab, without the prefix) of every absolute import of
    the lab in a file, inside functions too; a `from PACKAGE import name` of a lab package
    names the submodule it may be."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
            if node.module in EXPANDED:
                names = [f"{node.module}.{alias.name}" for alias in node.names]
        else:
            continue
        found += [
            (node.lineno, name.removeprefix("diarylab."))
            for name in names
            if name.startswith("diarylab.")
        ]
    return found


PARTS = tuple(LAYER)


def module_of(path: Path, root: Path) -> str:
    rel = path.relative_to(root).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def module_files(root: Path) -> dict[str, Path]:
    """Every module of the lab by its dotted name (without the diarylab prefix)."""
    found = {}
    for part in PARTS:
        for path in sorted((root / part).rglob("*.py")) if (root / part).is_dir() else []:
            found[module_of(path, root)] = path
    return found
