"""`diarylab report DIR`: findings.md with tables and plots, from a run folder's store."""

from __future__ import annotations

import argparse
from pathlib import Path


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("report", help="write DIR/report/findings.md from a run folder")
    p.add_argument("dir")
    p.add_argument("--resamples", type=int, help="bootstrap resamples (default: the design's)")
    p.set_defaults(handler=run_report)


def run_report(args: argparse.Namespace) -> int:
    path = make_report(Path(args.dir), resamples=args.resamples)
    print(f"report: {path}")
    return 0


def make_report(folder: Path, *, resamples: int | None = None) -> Path:
    from experiments.design import load_design
    from experiments.runfolder import read_locked_sha
    from experiments.store import Store
    from foundation.errors import LabError

    sha = read_locked_sha(folder)
    design = load_design(folder / "design.toml")
    if design.sha256 != sha:
        raise LabError(
            "design.toml no longer matches design.sha256",
            where=str(folder),
            fix="restore the locked design; it must not change after data exist",
        )
    store = Store(folder / "store.sqlite", design.kind.row_types)
    try:
        return design.kind.report(folder, store, design, resamples or design.resamples)
    finally:
        store.close()
