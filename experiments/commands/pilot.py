"""`diarylab pilot DESIGN --diarists N`: size a study from a reduced copy of its design."""

from __future__ import annotations

import argparse
from pathlib import Path

from diarylab.experiments.designs.opening import load_design


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "pilot",
        help="run a reduced copy of a design and report the per-cluster SD (diarists, role "
        "cards), a single text's score noise and the full design's minimum detectable effect "
        "per hypothesis and judge",
    )
    p.add_argument("design", help="the design TOML to pilot")
    p.add_argument(
        "--diarists",
        type=int,
        required=True,
        help="diarists (role cards for a friends design) in the pilot (2 or more)",
    )
    p.add_argument(
        "--repeats", type=int, default=4, help="times each resampled prompt is rewritten"
    )
    p.add_argument("--out", help="pilot folder (default: results/<name>-pilot-<hash>-n<N>)")
    p.add_argument(
        "--no-progress",
        action="store_true",
        help="no progress bar (the phases still print one line each as they finish)",
    )
    p.set_defaults(handler=run_pilot_command)


def run_pilot_command(args: argparse.Namespace) -> int:
    from diarylab.experiments.running.pilot import (  # loads torch: only when running
        check_pilot,
        run_pilot,
    )

    design = load_design(args.design)
    check_pilot(design, args.diarists, args.repeats)
    result = run_pilot(
        design,
        args.diarists,
        repeats=args.repeats,
        out=Path(args.out) if args.out else None,
        progress=not args.no_progress,
    )
    print(f"pilot folder: {result.folder}")
    print(result.table())
    return 0
