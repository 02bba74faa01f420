"""The demo design end to end on the embedded default: wall time and model calls, cold (a fresh
run folder, including the inline profile's vector extraction; the embedded model already
converted) and resumed (the same folder again: expect zero calls). Keeps the table in
bench/results/diary.json and writes it into docs/quickstart.md.

Run: .venv/bin/python bench/diary.py [--design experiments/designs/demo.toml] [--out FOLDER]"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.tables import ROOT, keep_results, write_docs_block  # noqa: E402
from diarylab.experiments.commands.demo import DEMO_DESIGN  # noqa: E402
from diarylab.experiments.designs.opening import load_design  # noqa: E402
from diarylab.experiments.running.runner import run_design  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--design", type=Path, default=DEMO_DESIGN)
    parser.add_argument(
        "--out", type=Path, help="keep the run folder here (default: a temporary one)"
    )
    args = parser.parse_args()
    design = load_design(args.design)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        out = args.out or Path(tmp) / "run"
        for label in ("cold", "resumed"):
            start = time.perf_counter()
            s = run_design(design, out, progress=False)
            wall = time.perf_counter() - start
            print(f"{label:8s} wall {wall:7.1f} s · {s.line()}")
            rows.append({"run": label, "wall s": round(wall, 1), "wall min": round(wall / 60, 1),
                         "model calls made": s.calls_made,
                         "read from the store": s.calls_cached, **s.rows})  # fmt: skip
    design_name = str(Path(args.design).resolve().relative_to(ROOT))
    kept = keep_results("diary", {"design": design_name}, {"demo_runs": rows})
    if Path(args.design).resolve() == DEMO_DESIGN.resolve():
        write_docs_block("quickstart.md", "diary", kept)


if __name__ == "__main__":
    main()
