"""The architecture as a rule: dependencies point one way.

foundation ← model_access ← steering / diarists / chatbots / rubric ← experiments ← testing

and inside experiments each folder on its floor (EXPERIMENT_ROOMS): engine ← analysis, profiles
← rating, checks ← kinds ← designs ← frames, derived ← planning ← running ← commands ← cli.

Within the middle layer only diarists may use steering (a profile holds a Steer); rubric and
chatbots never import steering. Every import is checked, including ones inside functions. And no
two modules anywhere import each other, directly or round a circle (type-only imports count).
The house's other rules (SQL, tests' imports, judges, what packages offer) are in
tests/test_house_rules.py."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from diarylab.testing.lab_imports import (
    LAYER,
    ROOT,
    SIDEWAYS,
    imported_modules,
    module_files,
    module_of,
)


def lab_imports(path: Path) -> list[tuple[int, str]]:
    return [
        (line, name.split(".")[0])
        for line, name in imported_modules(path)
        if name.split(".")[0] in LAYER
    ]


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
        "def f():\n"
        "    from diarylab.experiments.designs.opening import load_design\n"
        "    return load_design\n"
    )
    (tmp_path / "chatbots").mkdir()
    (tmp_path / "chatbots" / "bad.py").write_text("from diarylab import steering\n")
    assert violations("foundation", tmp_path) == ["foundation/bad.py:2 imports experiments"]
    assert violations("chatbots", tmp_path) == ["chatbots/bad.py:1 imports steering"]


def test_every_lab_package_is_ranked():
    packages = {p.parent.name for p in ROOT.glob("*/__init__.py")} - {"tests", "bench", "diarylab"}
    assert packages <= set(LAYER), f"rank the new package(s) {packages - set(LAYER)} in LAYER"


# ------------------------------------------------------------------ inside experiments/
# Every folder of experiments/ has a floor; a room imports only rooms on lower floors (and
# itself): the engine core; the shared shelves; the kinds; the door that opens designs; the
# results frames and derived runs; the plan; running a design; the commands; the CLI entry.
# A kind never imports another kind. Nothing sits loose at the top but the CLI entry.
EXPERIMENT_ROOMS = {
    "engine": 0,
    "analysis": 1,
    "profiles": 1,
    "rating": 2,
    "checks": 2,
    "kinds": 3,
    "designs": 4,
    "frames": 5,
    "derived": 5,
    "planning": 6,
    "running": 7,
    "commands": 8,
    "cli": 9,
}
TOP_FILES = {"__init__", "cli"}


def experiment_room(module: str) -> tuple[str, str | None]:
    """The room of a module under experiments/ (dotted name), and for a kind its name."""
    parts = module.split(".")[1:]
    if not parts:
        return "cli", None  # experiments/__init__.py
    if parts[0] == "kinds":
        return "kinds", parts[1] if len(parts) > 1 else None
    return parts[0], None


def loose_modules(root: Path = ROOT) -> list[str]:
    return sorted(p.name for p in (root / "experiments").glob("*.py") if p.stem not in TOP_FILES)


def test_experiments_has_no_loose_module_and_every_folder_is_ranked():
    assert loose_modules() == []
    folders = {p.parent.name for p in (ROOT / "experiments").glob("*/__init__.py")}
    assert folders == set(EXPERIMENT_ROOMS) - {"cli"}, "rank the new folder in EXPERIMENT_ROOMS"


def test_the_loose_module_check_can_fail(tmp_path):
    (tmp_path / "experiments").mkdir()
    for name in ("__init__.py", "cli.py", "runner.py"):
        (tmp_path / "experiments" / name).write_text("")
    assert loose_modules(tmp_path) == ["runner.py"]


def experiment_imports(path: Path) -> list[tuple[int, str]]:
    return [(line, n) for line, n in imported_modules(path) if n.split(".")[0] == "experiments"]


def room_violations(root: Path = ROOT) -> list[str]:
    bad = []
    for path in sorted((root / "experiments").rglob("*.py")):
        room, kind = experiment_room(module_of(path, root))
        for line, target in experiment_imports(path):
            their_room, their_kind = experiment_room(target)
            where = f"{path.relative_to(root)}:{line} imports {target}"
            if room != their_room and EXPERIMENT_ROOMS[their_room] >= EXPERIMENT_ROOMS[room]:
                bad.append(f"{where} (the {room} may not import the {their_room})")
            elif room == their_room == "kinds" and kind != their_kind and their_kind is not None:
                bad.append(f"{where} (a kind may not import another kind)")
    return bad


def test_experiments_rooms_point_one_way():
    assert room_violations() == []


def test_the_room_rule_catches_a_kind_importing_a_kind_and_the_shelf_importing_a_kind(tmp_path):
    for folder in ("engine", "analysis", "frames", "kinds/diary", "kinds/friends"):
        (tmp_path / "experiments" / folder).mkdir(parents=True)
    # a room on the same floor is no lower: the frames and the derived runs stand apart
    (tmp_path / "experiments" / "frames" / "bad.py").write_text(
        "from diarylab.experiments.derived.reuse import Reuse\n"
    )
    (tmp_path / "experiments" / "kinds" / "friends" / "bad.py").write_text(
        "from diarylab.experiments.kinds.diary.contrasts import Hypothesis\n"
    )
    (tmp_path / "experiments" / "analysis" / "bad.py").write_text(
        "def f():\n    from diarylab.experiments.kinds.diary import report\n"
    )
    (tmp_path / "experiments" / "engine" / "bad.py").write_text(
        "from diarylab.experiments.analysis import hypotheses\n"
        "from diarylab.experiments.running import runner\n"
    )
    (tmp_path / "experiments" / "kinds" / "diary" / "fine.py").write_text(
        "from diarylab.experiments.analysis.verdicts import holm\n"
        "from diarylab.experiments.kinds.diary import x\n"
    )
    assert room_violations(tmp_path) == [
        "experiments/analysis/bad.py:2 imports experiments.kinds.diary "
        "(the analysis may not import the kinds)",
        "experiments/engine/bad.py:1 imports experiments.analysis.hypotheses "
        "(the engine may not import the analysis)",
        "experiments/engine/bad.py:2 imports experiments.running "
        "(the engine may not import the running)",
        "experiments/frames/bad.py:1 imports experiments.derived.reuse "
        "(the frames may not import the derived)",
        "experiments/kinds/friends/bad.py:1 imports experiments.kinds.diary.contrasts "
        "(a kind may not import another kind)",
    ]


# ------------------------------------------------------------------ no import circles


# ------------------------------------------------------------------ no import circles
def import_graph(root: Path = ROOT) -> dict[str, set[str]]:
    """module → the lab modules it imports, every import counted: inside functions and under
    TYPE_CHECKING too (a circle of type references is still two modules that need each
    other), relative ones resolved, `from package import name` taken to the submodule."""
    files = module_files(root)

    def owner(name: str) -> str | None:
        while name and name not in files:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {m: set() for m in files}
    for module, path in files.items():
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package
                    for _ in range(node.level - 1):
                        base = base.rpartition(".")[0]
                    source = "diarylab." + ".".join(p for p in (base, node.module) if p)
                else:
                    source = node.module or ""
                targets = [f"{source}.{alias.name}" for alias in node.names]
            else:
                continue
            for target in targets:
                if target.startswith("diarylab."):
                    found = owner(target.removeprefix("diarylab."))
                    if found and found != module:
                        graph[module].add(found)
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(found)


def test_no_import_circle_anywhere():
    assert circles(import_graph()) == []


def test_the_circle_rule_catches_a_circle_through_a_type_only_import(tmp_path):
    (tmp_path / "rubric").mkdir()
    (tmp_path / "rubric" / "__init__.py").write_text("")
    (tmp_path / "rubric" / "a.py").write_text("from diarylab.rubric.b import B\n")
    (tmp_path / "rubric" / "b.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .c import C\n"
    )
    (tmp_path / "rubric" / "c.py").write_text("def f():\n    from diarylab.rubric import a\n")
    (tmp_path / "rubric" / "d.py").write_text("from diarylab.rubric.a import A\n")
    assert circles(import_graph(tmp_path)) == [["rubric.a", "rubric.b", "rubric.c"]]
