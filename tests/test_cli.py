"""The `diarylab` command as a shell sees it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_a_closed_pipe_ends_the_command_quietly():
    # `diarylab design expand ... | head -1`: the reader leaves after one line. The friends
    # design lists 352 pairs, more than a pipe buffer holds, so the writer meets the closed pipe.
    writer = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "diarylab.experiments.cli",
            "design",
            "expand",
            "experiments/designs/diary-full.toml",
            "--json",
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert writer.stdout is not None
    first = os.read(writer.stdout.fileno(), 100)  # a few bytes, never the whole output
    writer.stdout.close()
    stderr = writer.stderr.read().decode() if writer.stderr else ""
    code = writer.wait(timeout=120)
    assert first.startswith(b"{")
    assert "Traceback" not in stderr and "BrokenPipe" not in stderr, stderr
    assert code == 141
