"""The front door's speed, in one run: each command a new user types first, in a fresh
interpreter (so every import counts), timed three times each way: as the setup leaves the lab
(scripts/keep-plan-costs.sh has kept the shipped studies' judge reading costs, as
scripts/setup-env.sh runs it), with nothing kept (a judge the setup did not count: the plan
works its cost out), and again (what the run before kept is read back); prints the median
wall seconds of each, the CPU seconds of the last, whether torch was imported, and the target;
keeps the table in bench/results/front_door.json and writes it into docs/benchmarks.md.

Targets (issue 53): `design check --offline` ≤ 2 s, `plan` ≤ 3 s, `open_run(...).verdicts()`
≤ 3 s on an idle 2-core machine. Run: .venv/bin/python bench/front_door.py"""

from __future__ import annotations

import os
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


def _timed(code: str, kept: Path) -> tuple[float, float, bool]:
    env = {**os.environ, "DIARYLAB_PLAN_COSTS": str(kept)}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True, env=env
    )
    wall, cpu, torch = done.stdout.split()
    return float(wall), float(cpu), torch == "True"


def main() -> None:
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        example = Path(tmp) / "example"
        shutil.copytree(ROOT / "results" / "example", example)
        setup = Path(tmp) / "after-setup"
        env = {**os.environ, "DIARYLAB_PLAN_COSTS": str(setup)}
        subprocess.run([ROOT / "scripts" / "keep-plan-costs.sh"], check=True, env=env, cwd=ROOT)
        codes = {
            name: (CLI.format(args=args, tail=TAIL), goal) for name, (args, goal) in CASES.items()
        }
        codes["open_run(example).verdicts()"] = (VERDICTS.format(folder=str(example)), 3.0)
        for n, (name, (code, goal)) in enumerate(codes.items()):
            # after setup: each time a copy of what the setup kept; nothing kept: each time an
            # empty folder for the judges' reading costs (experiments/planning/cost_cache.py);
            # again: what the first run with nothing kept kept is read back
            fresh = []
            for k in range(REPEATS):
                copy = Path(tmp) / f"setup-{n}-{k}"
                shutil.copytree(setup, copy)
                fresh.append(_timed(code, copy))
            first = [_timed(code, Path(tmp) / f"first-{n}-{k}") for k in range(REPEATS)]
            again = [_timed(code, Path(tmp) / f"first-{n}-0") for _ in range(REPEATS)]
            after = statistics.median(r[0] for r in fresh)
            wall = statistics.median(r[0] for r in again)
            rows.append({"command": name, "after setup s": after,
                         "nothing kept s": statistics.median(r[0] for r in first),
                         "again s": wall, "again CPU s": statistics.median(r[1] for r in again),
                         "target s": goal, "met after setup": after <= goal,
                         "met again": wall <= goal,
                         "torch": any(r[2] for r in [*fresh, *first, *again])})  # fmt: skip
            print(f"{name:<40} after setup {after:5.2f} s  nothing kept "
                  f"{rows[-1]['nothing kept s']:5.2f} s  again {wall:5.2f} s  target "
                  f"{goal:.0f} s  torch {rows[-1]['torch']}")  # fmt: skip
    kept = keep_results("front_door", {"repeats": REPEATS}, {"front_door_times": rows})
    write_docs_block("benchmarks.md", "front_door", kept)


if __name__ == "__main__":
    main()
