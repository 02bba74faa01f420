"""The lab installs one import name, `diarylab`: the wheel holds nothing else at its top level,
and installed into a fresh environment it imports and runs from a folder that has its own
`experiments/`, `steering/` and `rubric/` packages (a research repository's usual layout),
which never shadow it. And no code here imports the lab by the old bare folder names."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PARTS = ("foundation", "model_access", "diarists", "steering", "chatbots", "rubric", "experiments")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    # Built from a copy (links kept as links), so setuptools' build/ never lands in the checkout.
    source = out / "source"
    skip = shutil.ignore_patterns(
        ".git", ".venv", "build", "*.egg-info", "results", "__pycache__", ".*_cache", "node_modules"
    )
    shutil.copytree(ROOT, source, symlinks=True, ignore=skip)
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
         str(source), "-w", str(out)],
        check=True, capture_output=True, text=True,
    )  # fmt: skip
    return next(out.glob("diarylab-*.whl"))


def test_the_wheel_installs_one_top_level_name(wheel):
    names = {n.split("/")[0] for n in zipfile.ZipFile(wheel).namelist()}
    assert {n for n in names if not n.endswith(".dist-info")} == {"diarylab"}
    inside = {n.split("/")[1] for n in zipfile.ZipFile(wheel).namelist() if n.count("/") >= 2}
    assert set(PARTS) <= inside  # every part of the lab travels inside the one package
    # Its data files too (role cards, templates, designs): TOML beside the code.
    files = zipfile.ZipFile(wheel).namelist()
    assert any(n.startswith("diarylab/experiments/designs/") for n in files)


def test_installed_lab_runs_beside_folders_of_the_same_names(wheel, tmp_path):
    env = tmp_path / "env"
    venv.EnvBuilder(with_pip=False).create(env)
    python = env / "bin" / "python"
    # The dependencies come from the lab's own environment (a path entry, not its .pth files:
    # the editable install's finder never loads in the fresh one); the lab from the wheel.
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True, capture_output=True, text=True,
    ).stdout.strip()  # fmt: skip
    ours = [p for p in sys.path if p.endswith("site-packages")][0]
    (Path(site) / "lab_dependencies.pth").write_text(ours + "\n")
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps",
         "--no-index", str(wheel)],
        check=True, capture_output=True, text=True,
    )  # fmt: skip
    project = tmp_path / "project"
    for name in ("experiments", "steering", "rubric"):
        (project / name).mkdir(parents=True)
        (project / name / "__init__.py").write_text(f"raise ImportError('shadowed: {name}')\n")
    probe = (
        "import diarylab, diarylab.experiments.cli, diarylab.steering.apply, "
        "diarylab.rubric.judging.judges; print(diarylab.__file__)"
    )
    located = subprocess.run(
        [str(python), "-c", probe], cwd=project, capture_output=True, text=True, check=True
    ).stdout
    assert str(env) in located and str(ROOT) not in located
    demo = "import diarylab.experiments.commands.demo as d; print(d.DEMO_DESIGN)"
    design = subprocess.run(
        [str(python), "-c", demo], cwd=project, capture_output=True, text=True, check=True
    ).stdout.strip()
    # `python -m` puts the working folder first on sys.path: the worst case for shadowing.
    checked = subprocess.run(
        [str(python), "-m", "diarylab.experiments.cli", "design", "check", design],
        cwd=project, capture_output=True, text=True,
    )  # fmt: skip
    assert checked.returncode == 0, checked.stderr
    assert (env / "bin" / "diarylab").exists()


def bare_imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        else:
            continue
        found += [f"{path.relative_to(ROOT)}:{node.lineno} {n}" for n in names
                  if n.split(".")[0] in PARTS]  # fmt: skip
    return found


def test_nothing_imports_the_lab_by_a_bare_folder_name():
    """`import experiments...` would work from the repository root (its folder is on sys.path)
    and fail everywhere else: everything imports diarylab.*."""
    files = [
        p
        for top in (*PARTS, "tests", "bench", "scripts", "diarylab")
        if (ROOT / top).is_dir()
        for p in (ROOT / top).rglob("*.py")
    ]
    found = [b for p in files for b in bare_imports(p)]
    assert found == []
