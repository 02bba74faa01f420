"""The demo design end to end on the embedded default: wall time and model calls, cold (a fresh
run folder, including the inline profile's vector extraction) and resumed (the same folder
again: expect zero calls).

Run: .venv/bin/python bench/diary.py [--design experiments/designs/demo.toml]"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from diarylab.experiments.commands.demo import DEMO_DESIGN
from diarylab.experiments.opening import load_design
from diarylab.experiments.runner import run_design


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--design", type=Path, default=DEMO_DESIGN)
    args = parser.parse_args()
    design = load_design(args.design)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "run"
        for label in ("cold", "resumed"):
            start = time.perf_counter()
            s = run_design(design, out, progress=False)
            wall = time.perf_counter() - start
            print(f"{label:8s} wall {wall:7.1f} s · {s.line()}")


if __name__ == "__main__":
    main()
