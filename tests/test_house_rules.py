"""The house's rules beside the layers (tests/test_layers.py): SQL only in the store package, no
test module importing another and no bench importing tests/, no check of a judge spec's kind
outside the judges' module, and each package's __all__ naming what the rest of the lab takes
from it. Each rule is shown able to fail."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from diarylab.testing.lab_imports import LAYER, PARTS, ROOT, module_of

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
            if relative == Path("tests") / "test_house_rules.py":
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
# the judges' own modules: the specs, and the builder that turns a spec into a judge
JUDGES_MODULES = {Path("rubric", "judging", "judges.py"), Path("rubric", "judging", "building.py")}
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
            if relative in JUDGES_MODULES:
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
    inside = tmp_path / "rubric" / "judging" / "judges.py"
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
