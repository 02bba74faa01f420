"""`diarylab design check FILE`, `diarylab design expand FILE [--json]` and
`diarylab design schema [--kind KIND]`."""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict

from diarylab.experiments.designs.opening import design_schema, load_design
from diarylab.experiments.kinds import kind_names


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("design", help="check, expand or describe design (preregistration) files")
    verbs = p.add_subparsers(dest="verb", required=True, metavar="VERB")
    check = verbs.add_parser("check", help="validate a design; exit 2 with one message if wrong")
    check.add_argument("file", help="the design TOML")
    check.add_argument(
        "--offline",
        action="store_true",
        help="check what the files alone can show: skip key variables and served-judge probes "
        "(what `run` checks in the environment it runs in)",
    )
    check.add_argument(
        "--timeout",
        type=float,
        default=10.0,
        metavar="SECONDS",
        help="how long to wait for each server the design names to answer before calling it "
        "unreachable (default 10)",
    )
    check.set_defaults(handler=run_check)
    exp = verbs.add_parser("expand", help="print the cells a design expands into")
    exp.add_argument("file", help="the design TOML")
    exp.add_argument("--json", action="store_true", help="one JSON object per line")
    exp.set_defaults(handler=run_expand)
    schema = verbs.add_parser("schema", help="print the JSON Schema of design files")
    schema.add_argument(
        "--kind",
        default=None,
        choices=kind_names(),
        help="one kind's schema (default: one schema for every kind, by [design].kind)",
    )
    schema.set_defaults(handler=run_schema)
    ref = verbs.add_parser(
        "reference", help="print every design field as Markdown (docs/designs.md)"
    )
    ref.set_defaults(handler=run_reference)


def run_check(args: argparse.Namespace) -> int:
    # here, not at the top: `diarylab --help` starts without torch and scipy
    from diarylab.experiments.checks.power import power_lines
    from diarylab.experiments.derived.checks import reuse_summary
    from diarylab.experiments.profiles.refs import describe_profiles
    from diarylab.experiments.running.preflight import preflight

    design = load_design(args.file)
    notes: list[str] = []
    checked = preflight(design, environment=not args.offline, notes=notes, timeout_s=args.timeout)
    cells = design.kind.cells(design, checked)
    # Everything is worked out before "ok" is said: a refusal never follows an "ok".
    reuse = reuse_summary(design)
    copied_from = reuse.source if reuse is not None else None
    lines = list(describe_profiles(design, design.kind.profile_refs(design), copied_from))
    lines += power_lines(design)
    lines += [f"not checked: {line}" for line in notes]
    lines += reuse.lines if reuse is not None else []
    from diarylab.experiments.engine.contract import PlanSupport

    if isinstance(design.kind, PlanSupport):  # a kind that counts its work: the plan's totals
        from diarylab.experiments.planning.plan import plan_design
        from diarylab.experiments.planning.render import totals_line

        lines.append(totals_line(plan_design(design)))
    print(
        f"{args.file}: ok — {design.kind.name} design {design.name!r} sha256 "
        f"{design.sha256[:12]}…, {design.kind.describe(design, cells)}"
    )
    for line in lines:
        print(f"  {line}")
    return 0


def run_expand(args: argparse.Namespace) -> int:
    from diarylab.experiments.profiles.refs import profile_ids

    design = load_design(args.file)
    for cell in design.kind.cells(design, profile_ids(design)):
        if args.json:
            print(json.dumps(asdict(cell), sort_keys=True))
        else:
            print(cell.id)
    return 0


def run_schema(args: argparse.Namespace) -> int:
    print(json.dumps(design_schema(args.kind), indent=2, sort_keys=True))
    return 0


def run_reference(args: argparse.Namespace) -> int:
    from diarylab.experiments.designs.reference import reference_markdown

    print(reference_markdown(), end="")
    return 0
