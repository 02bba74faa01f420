"""The architecture as a rule: dependencies point one way.

foundation ← model_access ← steering / diarists / chatbots / rubric ← experiments

Within the middle layer only diarists may use steering (a profile holds a Steer); rubric and
chatbots never import steering. Every import is checked, including ones inside functions."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LAYER = {
    "foundation": 0,
    "model_access": 1,
    "steering": 2,
    "diarists": 2,
    "chatbots": 2,
    "rubric": 2,
    "experiments": 3,
}
SIDEWAYS = {("diarists", "steering")}  # the only import allowed inside one layer


def lab_imports(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        else:
            continue
        for name in names:
            top = name.split(".")[0]
            if top in LAYER:
                found.append((node.lineno, top))
    return found


def violations(package: str, root: Path = ROOT) -> list[str]:
    bad = []
    for path in sorted((root / package).rglob("*.py")):
        for line, target in lab_imports(path):
            if target == package:
                continue
            upward = LAYER[target] > LAYER[package]
            sideways = LAYER[target] == LAYER[package] and (package, target) not in SIDEWAYS
            if upward or sideways:
                bad.append(f"{path.relative_to(root)}:{line} imports {target}")
    return bad


@pytest.mark.parametrize("package", sorted(LAYER))
def test_no_package_imports_a_higher_or_sideways_layer(package):
    assert violations(package) == []


def test_the_rule_catches_upward_and_sideways_imports(tmp_path):
    # The checker itself must be able to fail: plant modules that break the rule.
    (tmp_path / "foundation").mkdir()
    (tmp_path / "foundation" / "bad.py").write_text(
        "def f():\n    from experiments.design import load_design\n    return load_design\n"
    )
    (tmp_path / "chatbots").mkdir()
    (tmp_path / "chatbots" / "bad.py").write_text("import steering.apply\n")
    assert violations("foundation", tmp_path) == ["foundation/bad.py:2 imports experiments"]
    assert violations("chatbots", tmp_path) == ["chatbots/bad.py:1 imports steering"]


def test_every_lab_package_is_ranked():
    packages = {p.parent.name for p in ROOT.glob("*/__init__.py")} - {"tests", "bench"}
    assert packages <= set(LAYER), f"rank the new package(s) {packages - set(LAYER)} in LAYER"
