"""The demo design end to end on the embedded default: wall time and model calls, cold (a fresh
run folder) and resumed (the same folder again: expect zero calls).

Run: .venv/bin/python bench/diary.py [--design experiments/designs/demo.toml]"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from experiments.commands.demo import DEMO_DESIGN, ensure_profile
from experiments.design import load_design
from experiments.runner import run_design
from foundation.datafiles import load_toml


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--design", type=Path, default=DEMO_DESIGN)
    args = parser.parse_args()
    start = time.perf_counter()
    ensure_profile(args.design, load_toml(args.design))
    print(f"profile ready: {time.perf_counter() - start:.1f} s (vector extraction on first use)")
    design = load_design(args.design)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "run"
        for label in ("cold", "resumed"):
            start = time.perf_counter()
            s = run_design(design, out, progress=False)
            wall = time.perf_counter() - start
            print(
                f"{label:8s} wall {wall:7.1f} s · model calls made {s.calls_made:5d} · "
                f"read from store {s.calls_cached:5d} · entries {s.entries} · replies "
                f"{s.replies} · judgments {s.judgments}"
            )


if __name__ == "__main__":
    main()
