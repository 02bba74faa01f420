"""The front door's speed, in one run: each command a new user types first, in a fresh
interpreter (so every import counts), timed three times; prints the median wall and CPU
seconds, whether torch was imported, and the target; keeps the table in
bench/results/front_door.json and writes it into docs/benchmarks.md.

Targets (issue 53): `design check --offline` ≤ 2 s, `plan` ≤ 3 s, `open_run(...).verdicts()`
≤ 3 s on an idle 2-core machine. Run: .venv/bin/python bench/front_door.py"""

from __future__ import annotations

import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.tables import ROOT, keep_results, write_docs_block  # noqa: E402

REPEATS = 3
CLI = (
    "import contextlib, io, resource, sys, time\n"
    "t = time.perf_counter()\n"
    "from diarylab.experiments.cli import main\n"
    "with contextlib.redirect_stdout(io.StringIO()):\n"
    "    assert main({args!r}) == 0\n"
    "{tail}"
)
TAIL = (
    "u = resource.getrusage(resource.RUSAGE_SELF)\n"
    "print(time.perf_counter() - t, u.ru_utime + u.ru_stime, 'torch' in sys.modules)\n"
)
VERDICTS = (
    "import resource, sys, time\n"
    "t = time.perf_counter()\n"
    "import diarylab\n"
    "with diarylab.open_run({folder!r}) as run:\n"
    "    run.verdicts()\n" + TAIL
)
CASES = {
    "design check --offline diary-full.toml": (
        ["design", "check", "--offline", "experiments/designs/diary-full.toml"], 2.0),
    "plan diary-full.toml": (["plan", "experiments/designs/diary-full.toml"], 3.0),
    "plan friends.toml": (["plan", "experiments/designs/friends.toml"], 3.0),
    "serve-lines diary-full.toml": (["serve-lines", "experiments/designs/diary-full.toml"], 3.0),
}  # fmt: skip


def _timed(code: str) -> tuple[float, float, bool]:
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True
    )
    wall, cpu, torch = done.stdout.split()
    return float(wall), float(cpu), torch == "True"


def main() -> None:
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        example = Path(tmp) / "example"
        shutil.copytree(ROOT / "results" / "example", example)
        codes = {
            name: (CLI.format(args=args, tail=TAIL), goal) for name, (args, goal) in CASES.items()
        }
        codes["open_run(example).verdicts()"] = (VERDICTS.format(folder=str(example)), 3.0)
        for name, (code, goal) in codes.items():
            runs = [_timed(code) for _ in range(REPEATS)]
            wall = statistics.median(r[0] for r in runs)
            cpu = statistics.median(r[1] for r in runs)
            rows.append({"command": name, "wall s (median of 3)": wall, "CPU s": cpu,
                         "target s": goal, "met": wall <= goal, "torch": runs[0][2]})  # fmt: skip
            print(f"{name:<40} wall {wall:5.2f} s  CPU {cpu:5.2f} s  target {goal:.0f} s  "
                  f"torch {runs[0][2]}")  # fmt: skip
    kept = keep_results("front_door", {"repeats": REPEATS}, {"front_door_times": rows})
    write_docs_block("benchmarks.md", "front_door", kept)


if __name__ == "__main__":
    main()
