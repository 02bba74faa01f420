"""`diarylab report DIR`: findings.md with tables and plots, from a run folder's store."""

from __future__ import annotations

import argparse
from pathlib import Path


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("report", help="write DIR/report/findings.md from a run folder")
    p.add_argument("dir", help="a run folder (finished or not)")
    p.add_argument(
        "--resamples", type=int, help="bootstrap resamples, at least 100 (default: the design's)"
    )
    p.set_defaults(handler=run_report)


def run_report(args: argparse.Namespace) -> int:
    path = make_report(Path(args.dir), resamples=args.resamples)
    print(f"report: {path}")
    return 0


def make_report(folder: Path, *, resamples: int | None = None) -> Path:
    from diarylab.experiments.designs.opening import open_run_folder
    from diarylab.experiments.engine.inputs import input_copies
    from diarylab.foundation.datafiles import reading_from
    from diarylab.foundation.errors import LabError

    if resamples is not None and resamples < 100:
        raise LabError(
            f"--resamples {resamples} is too few for an interval",
            where="--resamples",
            fix="use at least 100 (the design's own count when left out)",
        )
    run = open_run_folder(folder)
    try:
        # The lab's data files a report re-reads (the rubric, role cards) come from the folder's
        # own copies: the checkout may hold a newer lab version than the one the run used.
        with reading_from(input_copies(folder)):
            return run.design.kind.report(
                folder, run.store, run.design, resamples or run.design.resamples
            )
    finally:
        run.store.close()
