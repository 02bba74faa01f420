"""`diarylab rate`: people check the judges. `rate plan` says what a rating takes, `rate
sample` draws a blinded, stratified sample of a diary run's texts, locks it in the run folder
and writes the sheets (an HTML page and a CSV per rater, Label Studio's config and tasks),
`rate import` reads the raters' answers back into the run's store; `diarylab report` then
shows the agreement (experiments/rating/)."""

from __future__ import annotations

import argparse
from pathlib import Path

DEFAULT_SECONDS = 60.0


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("rate", help="check the judges against people: sample, sheets, import")
    rate = p.add_subparsers(dest="rate_command", required=True, metavar="STEP")

    def sizes(q: argparse.ArgumentParser, required: bool) -> None:
        q.add_argument(
            "--n", type=int, required=required, help="texts to rate (entries and replies)"
        )
        q.add_argument("--raters", type=int, required=required, help="people rating every text")
        q.add_argument(
            "--seconds-per-item",
            type=float,
            default=DEFAULT_SECONDS,
            help=f"a rater's seconds per text, for the plan line (default {DEFAULT_SECONDS:g})",
        )

    plan = rate.add_parser("plan", help="items, raters and minutes a rating takes")
    sizes(plan, required=True)
    plan.set_defaults(handler=run_plan)

    sample = rate.add_parser("sample", help="draw and lock a blinded sample; write the sheets")
    sample.add_argument("dir", help="a finished diary run folder")
    sizes(sample, required=True)
    sample.add_argument("--seed", type=int, default=0, help="the draw's seed (default 0)")
    sample.add_argument(
        "--boost",
        type=float,
        default=3.0,
        help="how much more often the texts the judges disagree on most are drawn: "
        "up to 1 + BOOST times (default 3; 0 draws evenly)",
    )
    sample.set_defaults(handler=run_sample)

    imports = rate.add_parser("import", help="store raters' answer files in the run's store")
    imports.add_argument("dir", help="the run folder the sample was drawn from")
    imports.add_argument(
        "files", nargs="+", help="rating page downloads, CSV sheets, Label Studio exports"
    )
    imports.set_defaults(handler=run_import)


def _settings(args: argparse.Namespace) -> object:
    from diarylab.experiments.rating.lock import SampleSettings

    return SampleSettings(
        n=args.n,
        raters=args.raters,
        seed=getattr(args, "seed", 0),
        boost=getattr(args, "boost", 3.0),
        seconds_per_item=args.seconds_per_item,
    )


def run_plan(args: argparse.Namespace) -> int:
    from diarylab.experiments.commands._rate_steps import plan_line
    from diarylab.foundation.errors import LabError

    for name in ("n", "raters", "seconds_per_item"):
        if getattr(args, name) <= 0:
            raise LabError(
                f"--{name.replace('_', '-')} {getattr(args, name):g} must be above 0",
                where="rate plan",
                fix="give a positive number",
            )
    print(plan_line(_settings(args)))  # type: ignore[arg-type]
    return 0


def run_sample(args: argparse.Namespace) -> int:
    from diarylab.experiments.commands._rate_steps import (
        draw_sample,
        plan_line,
        questions_per_item,
    )

    sample, written, drawn = draw_sample(Path(args.dir), _settings(args))  # type: ignore[arg-type]
    state = "drawn and locked" if drawn else "already locked; sheets written again"
    print(f"rating sample {sample.sha256[:16]}: {state} in {Path(args.dir) / 'rating'}")
    print(plan_line(sample.settings, questions_per_item(sample)))
    for path in written:
        print(f"  {path}")
    return 0


def run_import(args: argparse.Namespace) -> int:
    from diarylab.experiments.commands._rate_steps import import_ratings

    new, total, missing = import_ratings(Path(args.dir), [Path(f) for f in args.files])
    print(
        f"ratings: {new} answers stored now, {total} in the store; "
        f"`diarylab report {args.dir}` shows the agreement"
    )
    for line in missing:
        print(f"  still to answer: {line}")
    if missing:
        print("  import the finished sheet again when it is done: answers stored are kept")
    return 0
