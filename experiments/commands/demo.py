"""`diarylab demo`: the README's main job. Runs the demo design (its steered profile is an inline
rule, so the first run extracts the vector on the embedded default inside the run folder;
running again resumes) and writes its report."""

from __future__ import annotations

import argparse
from pathlib import Path

DEMO_DESIGN = Path(__file__).parent.parent / "designs" / "demo.toml"


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("demo", help="run the demo diary experiment on the embedded default model")
    p.add_argument(
        "--design", type=Path, default=DEMO_DESIGN, help="the design to run (default: the demo)"
    )
    p.add_argument("--out", type=Path, help="run folder (default: results/<name>-<hash>)")
    p.add_argument(
        "--no-progress",
        action="store_true",
        help="no progress bar (the phases still print one line each as they finish)",
    )
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from diarylab.experiments.commands.report import make_report
    from diarylab.experiments.designs.opening import load_design
    from diarylab.experiments.running.runner import run_design

    summary = run_design(load_design(args.design), args.out, progress=not args.no_progress)
    print(f"run folder: {summary.folder}")
    print(summary.line())
    report = make_report(summary.folder)
    print(f"\nreport: {report}")
    print(
        "The embedded default is a 135M-parameter model and a useless judge: these numbers "
        "show the pipeline working, not findings."
    )
    return 0
