"""The architecture as a rule: dependencies point one way.

foundation ← model_access ← steering / diarists / chatbots / rubric ← experiments ← testing

and inside experiments: engine core ← shared analysis ← kinds ← runner and commands.

Within the middle layer only diarists may use steering (a profile holds a Steer); rubric and
chatbots never import steering. Every import is checked, including ones inside functions. And no
two modules anywhere import each other, directly or round a circle (type-only imports count)."""

from __future__ import annotations

import ast
import re
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


def module_of(path: Path, root: Path) -> str:
    rel = path.relative_to(root).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


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
PARTS = tuple(LAYER)


def module_files(root: Path) -> dict[str, Path]:
    """Every module of the lab by its dotted name (without the diarylab prefix)."""
    found = {}
    for part in PARTS:
        for path in sorted((root / part).rglob("*.py")) if (root / part).is_dir() else []:
            found[module_of(path, root)] = path
    return found


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


# ----------------------------------------------------------------------------- SQL
# What reaches into SQLite: only the store package (experiments/engine/store/) may — in the lab,
# its benches and its tests alike (tests read stores through the store's typed reads and edits,
# testing/stores.py; a store of an older format is a data file, tests/data/). This file is left out:
# it holds the pattern as text.
SQL = re.compile(r"json_extract|\.execute\(|\.executemany\(|read_sql|sqlite3\.connect")
STORE_PACKAGE = Path("experiments") / "engine" / "store"


def sql_outside_the_store(root: Path = ROOT) -> list[str]:
    found = []
    for folder in (*(root / p for p in LAYER), root / "bench", root / "tests"):
        for path in sorted(folder.rglob("*.py")) if folder.is_dir() else []:
            relative = path.relative_to(root)
            if relative.is_relative_to(STORE_PACKAGE) or "__pycache__" in relative.parts:
                continue
            if relative == Path("tests") / "test_layers.py":
                continue
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                if SQL.search(line):
                    found.append(f"{relative}:{number}: {line.strip()}")
    return found


def test_no_sql_outside_the_store_package():
    assert sql_outside_the_store() == []


def test_the_sql_rule_catches_a_query_in_a_report(tmp_path):
    report = tmp_path / "experiments" / "kinds" / "toy" / "report.py"
    report.parent.mkdir(parents=True)
    report.write_text('rows = store.db.execute("SELECT * FROM judgments")\n')
    inside = tmp_path / STORE_PACKAGE / "reads.py"
    inside.parent.mkdir(parents=True)
    inside.write_text('rows = self.db.execute("SELECT 1")\n')
    a_test = tmp_path / "tests" / "test_toy.py"
    a_test.parent.mkdir()
    a_test.write_text('db = sqlite3.connect(folder / "store.sqlite")\n')
    assert [f.split(":")[0] for f in sql_outside_the_store(tmp_path)] == [
        str(Path("experiments/kinds/toy/report.py")),
        str(Path("tests/test_toy.py")),
    ]


# ------------------------------------------------------------------ tests and benches
# A test module imports no other test module, and the benches import nothing from tests/:
# what they share (fakes, stand-ins, builders, fixtures) lives in diarylab.testing.
def imports_of_tests(folder: Path) -> list[str]:
    found = []
    for path in sorted(folder.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
            elif isinstance(node, ast.ImportFrom):  # relative: inside tests/, a test module
                names = [f"tests.{node.module or ''}"]
            else:
                continue
            if any(n == "tests" or n.startswith("tests.") for n in names):
                found.append(f"{path.relative_to(folder.parent)}:{node.lineno}")
    return found


def test_no_test_module_imports_another_and_no_bench_imports_tests():
    assert imports_of_tests(ROOT / "tests") == []
    assert imports_of_tests(ROOT / "bench") == []


def test_the_test_import_rule_can_fail(tmp_path):
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_a.py").write_text("from tests.test_b import helper\n")
    (tmp_path / "tests" / "test_c.py").write_text("def f():\n    import tests.conftest\n")
    (tmp_path / "bench").mkdir()
    (tmp_path / "bench" / "b.py").write_text("from tests import fake_openai\n")
    assert imports_of_tests(tmp_path / "tests") == ["tests/test_a.py:1", "tests/test_c.py:2"]
    assert imports_of_tests(tmp_path / "bench") == ["bench/b.py:1"]


# ------------------------------------------------------------------ judges answer for themselves
# What the engine, the plan and the checks ask of a judge (its lane, its cost, its server or
# weights, its probe's verdict, ...) is asked of the spec (rubric/judging/judges.py), never by
# testing which kind of judge it is.
JUDGES_MODULE = Path("rubric") / "judging" / "judges.py"
JUDGE_KIND = re.compile(
    r"isinstance\([^)]*\b(?:Local|Served)JudgeSpec\b"
    r"|\.reading_mode\s*(?:[!=]=|in\b)"
    r"|\b(?:j|judge\w*|spec)\.kind\s*(?:[!=]=|in\b)"
    r"|getattr\(\s*(?:j|judge\w*|spec)\b"
)


def judge_kind_checks(root: Path = ROOT) -> list[str]:
    found = []
    for part in PARTS:
        for path in sorted((root / part).rglob("*.py")) if (root / part).is_dir() else []:
            relative = path.relative_to(root)
            if relative == JUDGES_MODULE:
                continue
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                if JUDGE_KIND.search(line):
                    found.append(f"{relative}:{number}: {line.strip()}")
    return found


def test_no_code_outside_the_judges_module_checks_a_judge_specs_kind():
    assert judge_kind_checks() == []


def test_the_judge_kind_rule_can_fail(tmp_path):
    planning = tmp_path / "experiments" / "planning"
    planning.mkdir(parents=True)
    (planning / "bad.py").write_text(
        "local = isinstance(spec, LocalJudgeSpec)\n"
        'lane = 0 if judge.kind == "local" else 1\n'
        'width = getattr(spec, "endpoint", None)\n'
        'if spec.reading_mode == "top-k":\n'
        "    pass\n"
    )
    inside = tmp_path / JUDGES_MODULE
    inside.parent.mkdir(parents=True)
    inside.write_text("if isinstance(spec, LocalJudgeSpec):\n    pass\n")
    assert [f.split(": ")[0] for f in judge_kind_checks(tmp_path)] == [
        f"{Path('experiments/planning/bad.py')}:{n}" for n in (1, 2, 3, 4)
    ]


# ------------------------------------------------------------------ what each package offers
# Each package's __init__ says with __all__ what it offers the rest of the lab; the rest is
# internal. Lab code (diarylab.testing and the tests apart) takes from a package nothing it
# does not list.
def package_offers(root: Path = ROOT) -> dict[str, set[str]]:
    found = {}
    for part in PARTS:
        for init in (root / part).rglob("__init__.py") if (root / part).is_dir() else []:
            tree = ast.parse(init.read_text(encoding="utf-8"))
            listed = next(
                (
                    {e.value for e in node.value.elts}  # type: ignore[attr-defined]
                    for node in tree.body
                    if isinstance(node, ast.Assign)
                    and any(getattr(t, "id", "") == "__all__" for t in node.targets)
                ),
                None,
            )
            found[module_of(init, root)] = listed
    return found


def unlisted_uses(root: Path = ROOT) -> list[str]:
    offers = package_offers(root)
    bad = [
        f"{p.replace('.', '/')}/__init__.py has no __all__" for p, o in offers.items() if o is None
    ]
    for part in PARTS:
        if part == "testing":
            continue
        for path in sorted((root / part).rglob("*.py")) if (root / part).is_dir() else []:
            me = module_of(path, root)
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for node in ast.walk(tree):
                if isinstance(node, ast.Import):
                    targets = [a.name for a in node.names]
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    targets = [f"{node.module}.{a.name}" for a in node.names]
                else:
                    continue
                for target in (t.removeprefix("diarylab.") for t in targets):
                    parts = target.split(".")
                    for i in range(1, len(parts)):
                        package = ".".join(parts[:i])
                        inside = me == package or me.startswith(package + ".")
                        if (
                            package in offers
                            and not inside
                            and parts[i] not in (offers[package] or ())
                        ):
                            bad.append(
                                f"{path.relative_to(root)}:{node.lineno} takes {parts[i]!r} "
                                f"from {package}, which does not list it"
                            )
    return bad


def test_every_package_lists_what_it_offers_and_the_lab_takes_nothing_else():
    assert unlisted_uses() == []


def test_the_offer_rule_can_fail(tmp_path):
    (tmp_path / "steering").mkdir()
    (tmp_path / "steering" / "__init__.py").write_text('__all__ = ["apply"]\n')
    (tmp_path / "steering" / "inner.py").write_text("")
    (tmp_path / "rubric").mkdir()
    (tmp_path / "rubric" / "__init__.py").write_text("")
    (tmp_path / "rubric" / "bad.py").write_text("from diarylab.steering.inner import x\n")
    assert unlisted_uses(tmp_path) == [
        "rubric/__init__.py has no __all__",
        "rubric/bad.py:1 takes 'inner' from steering, which does not list it",
    ]
