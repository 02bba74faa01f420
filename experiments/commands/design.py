"""`diarylab design check FILE` and `diarylab design expand FILE --json`."""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict

from experiments.cells import expand
from experiments.design import load_design
from experiments.profiles import check_profiles


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("design", help="check or expand a design (preregistration) file")
    verbs = p.add_subparsers(dest="verb", required=True, metavar="VERB")
    check = verbs.add_parser("check", help="validate a design; exit 2 with one message if wrong")
    check.add_argument("file")
    check.set_defaults(handler=run_check)
    exp = verbs.add_parser("expand", help="print the cells a design expands into")
    exp.add_argument("file")
    exp.add_argument("--json", action="store_true", help="one JSON object per line")
    exp.set_defaults(handler=run_expand)


def run_check(args: argparse.Namespace) -> int:
    design = load_design(args.file)
    profiles = check_profiles(design)
    cells = expand(design, profiles)
    print(
        f"{args.file}: ok — design {design.name!r} sha256 {design.sha256[:12]}…, "
        f"{len(design.diarists)} diarists × {len(profiles)} profiles × "
        f"{len(design.chatbots)} chatbots = {len(cells)} cells, {design.entries} entries each, "
        f"{len(design.judges)} judge(s), {len(design.hypotheses)} hypotheses"
    )
    return 0


def run_expand(args: argparse.Namespace) -> int:
    design = load_design(args.file)
    for cell in expand(design, check_profiles(design)):
        if args.json:
            print(json.dumps(asdict(cell), sort_keys=True))
        else:
            print(cell.id)
    return 0
