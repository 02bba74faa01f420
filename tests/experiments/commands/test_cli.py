"""The `diarylab` command as a shell sees it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


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
            "experiments/designs/friends.toml",  # 83 KB of JSON lines: past a 64 KiB pipe
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


def heavy_after(args: list[str]) -> tuple[str, str]:
    """Run `diarylab ARGS` in a fresh interpreter: its stdout, and which of torch, scipy,
    transformers and pandas it had imported when it returned (and its exit status)."""
    import subprocess
    import sys

    probe = (
        "import sys\n"
        "from diarylab.experiments.cli import main\n"
        "try:\n"
        f"    code = main({args!r})\n"
        "except SystemExit as exit:\n"
        "    code = exit.code\n"
        "heavy = [m for m in ('torch', 'scipy', 'transformers', 'pandas') if m in sys.modules]\n"
        "print('HEAVY', heavy, code, file=sys.stderr)\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    return done.stdout, done.stderr


def test_help_starts_without_the_heavy_libraries():
    """`diarylab --help` imports none of torch, scipy, transformers, pandas (they cost seconds;
    each command imports what it uses when it runs)."""
    out, err = heavy_after(["--help"])
    assert "usage: diarylab" in out and "HEAVY [] 0" in err


def test_an_offline_design_check_starts_without_the_heavy_libraries():
    """`design check --offline` on a design with inline profiles loads no vector and no model,
    so it must not pay for torch, scipy, transformers or pandas (seconds each)."""
    out, err = heavy_after(["design", "check", "--offline", "experiments/designs/demo.toml"])
    assert "ok" in out and "HEAVY [] 0" in err


def test_ctrl_c_while_the_commands_load_is_one_line(monkeypatch, capsys):
    from diarylab.experiments import cli

    def interrupted():
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "build_parser", interrupted)
    assert cli.main(["--help"]) == 130
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "interrupted" in err and "Traceback" not in err
