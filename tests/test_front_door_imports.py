"""Reading a run's results imports no model code: `diarylab.open_run(...).verdicts()` on the
shipped example loads neither torch nor transformers (checked in a fresh interpreter, since the
test process has them loaded)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parent.parent / "results" / "example"


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
