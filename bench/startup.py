"""How long the commands a new user types first take to answer, in fresh processes.

    python bench/startup.py [--repeats 5]

Times `diarylab --help`, `diarylab design check --offline` on the demo design (inline profiles:
no vector and no model to load) and on the seed designs (whose plan line builds the judges'
tokenizers from the seed package), next to `python -c "import torch"` for scale. Each figure is
the median wall time of fresh processes on this machine, measured in this one run; the target
for the first two is under 2 s."""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DESIGNS = ROOT / "experiments" / "designs"


def timed(command: list[str], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        subprocess.run(command, cwd=ROOT, capture_output=True, check=False)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--seed-designs", action="store_true", help="also the seed designs")
    args = parser.parse_args()
    lab = [sys.executable, "-m", "diarylab.experiments.cli"]
    cases = {
        "python -c 'import torch' (scale)": [sys.executable, "-c", "import torch"],
        "diarylab --help": [*lab, "--help"],
        "design check --offline demo.toml": [
            *lab,
            "design",
            "check",
            "--offline",
            str(DESIGNS / "demo.toml"),
        ],  # fmt: skip
    }
    if args.seed_designs:
        for name in ("friends.toml", "diary-full.toml"):
            cases[f"design check --offline {name}"] = [
                *lab, "design", "check", "--offline", str(DESIGNS / name),
            ]  # fmt: skip
    print(f"median of {args.repeats} fresh processes each")
    for label, command in cases.items():
        seconds = timed(command, args.repeats)
        seed = label.endswith(("friends.toml", "diary-full.toml"))
        target = "" if "scale" in label or seed else "  (target < 2 s)"
        print(f"  {label:<44} {seconds:6.2f} s{target}")


if __name__ == "__main__":
    main()
