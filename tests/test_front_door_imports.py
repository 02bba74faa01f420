"""The front door imports no model code: `diarylab.open_run(...).verdicts()` on the shipped
example loads neither torch nor transformers, and checking, planning and printing the serve
lines of the shipped designs load no torch (each in a fresh interpreter, since the test process
has them loaded)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "results" / "example"


def test_reading_verdicts_imports_no_torch(tmp_path):
    shutil.copytree(EXAMPLE, tmp_path / "example")
    code = (
        "import sys, diarylab\n"
        f"with diarylab.open_run({str(tmp_path / 'example')!r}) as run:\n"
        "    assert len(run.verdicts()) > 0\n"
        "print(sorted(m for m in ('torch', 'transformers') if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "[]"


SHIPPED = (
    "design check --offline experiments/designs/diary-full.toml",
    "plan experiments/designs/diary-full.toml --json",
    "plan experiments/designs/friends.toml --json",
    "serve-lines experiments/designs/diary-full.toml",
)


def test_checking_and_planning_the_shipped_designs_imports_no_torch():
    """The seed judges' tokenizers come from their offline stand-ins, found without importing
    transformers' model code (which loads torch). One interpreter runs every command in turn
    and says after each whether torch is loaded."""
    code = (
        "import contextlib, io, sys\n"
        "from diarylab.experiments.cli import main\n"
        f"for args in {[a.split() for a in SHIPPED]!r}:\n"
        "    with contextlib.redirect_stdout(io.StringIO()):\n"
        "        assert main(args) == 0, args\n"
        "    print(' '.join(args[:2]), 'torch' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.strip().splitlines()
    assert len(lines) == len(SHIPPED) and all(line.endswith("False") for line in lines), lines
