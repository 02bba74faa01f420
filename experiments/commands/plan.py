"""`diarylab plan DESIGN [--rate NAME=PER_S ...] [--json]`: what a design will make and ask
before it runs (experiments/planning/)."""

from __future__ import annotations

import argparse
import json
import math
from typing import TYPE_CHECKING, Any

from diarylab.experiments.commands._options import add_gpu_option
from diarylab.experiments.designs.opening import load_design
from diarylab.experiments.engine.contract import Design
from diarylab.foundation.errors import LabError

if TYPE_CHECKING:
    from diarylab.experiments.planning.gpu_hours import Throughput

DIARIST = "diarist"


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "plan",
        help="count a design's texts, judge readings, requests and tokens (and hours, at rates)",
    )
    p.add_argument("file", help="the design TOML")
    p.add_argument(
        "--rate",
        action="append",
        default=[],
        metavar="NAME=PER_S",
        help="a measured rate, repeatable: a judge id in prompts per second (`diarylab judge "
        "probe --rate` measures one), a chatbot id or `diarist` in texts per second",
    )
    p.add_argument(
        "--tokenizer",
        action="append",
        default=[],
        metavar="JUDGE=NAME",
        help="count an exact judge's readings with this tokenizer (hub id, folder, smollm2) "
        "where its own is not on this machine: one that splits numbers alike",
    )
    p.add_argument(
        "--measure",
        action="store_true",
        help="read a seeded sample of real prompts with each served judge and plan from what "
        "it took; the measurement is kept beside the design, and `run` is held to it (a judge "
        "whose server does not answer within --timeout stops the plan, exit 2; plan without "
        "--measure for the stated figures)",
    )
    p.add_argument(
        "--measured",
        action="store_true",
        help="plan from the measurement an earlier --measure kept beside the design "
        "(DESIGN.measured.json), reading nothing",
    )
    p.add_argument(
        "--timeout",
        type=float,
        default=10.0,
        metavar="SECONDS",
        help="with --measure: how long to wait for each judge's server to answer before "
        "calling it unreachable (default 10)",
    )
    p.add_argument(
        "--from",
        dest="source",
        metavar="DIR",
        help="with --measure: take the texts from this run or pilot folder (default: stand-ins "
        "from the role cards)",
    )
    p.add_argument(
        "--sample", type=int, default=8, help="with --measure: texts per question (default 8)"
    )
    add_gpu_option(p, "the GPU-hours and GPU counts")
    p.add_argument(
        "--throughput",
        action="append",
        default=[],
        metavar="NAME=PREFILL,DECODE",
        help="a model's tokens per second on one GPU (prompt tokens computed, tokens "
        "generated), repeatable: replaces the estimate from the GPU's peaks for that model",
    )
    p.add_argument(
        "--gpu-only",
        action="store_true",
        help="print only the GPU part: per model its tokens, GPUs, GPU-hours or API dollars",
    )
    p.add_argument("--json", action="store_true", help="the plan as one JSON object")
    p.set_defaults(handler=run_plan)


def parse_rates(values: list[str], design: Design) -> dict[str, float]:
    spec = design.spec
    known = [*(j.id for j in spec.judges), *(c.id for c in spec.chatbots)]
    if spec.writes:
        known.append(DIARIST)
    fix = f"write --rate NAME=PER_S with NAME one of {', '.join(known)} and PER_S > 0"
    out: dict[str, float] = {}
    for name, number in _named(
        values,
        "--rate",
        "NAME=PER_S",
        known,
        f"a judge, chatbot or the diarist of {design.path}",
        fix,
    ).items():
        try:
            rate = float(number)
        except ValueError:
            rate = math.nan
        if not math.isfinite(rate) or rate <= 0:
            raise LabError(f"{number!r} is not a positive rate", where=f"--rate {name}", fix=fix)
        out[name] = rate
    return out


def _named(
    values: list[str], option: str, shape: str, known: list[str], what: str, fix: str
) -> dict[str, str]:
    """NAME=VALUE pairs of a repeatable option, each NAME one of `known` (`what` says which)."""
    out = {}
    for value in values:
        name, sep, given = (part.strip() for part in value.partition("="))
        if not sep or not name or not given:
            raise LabError(f"{value!r} is not {shape}", where=option, fix=fix)
        if name not in known:
            raise LabError(f"{name!r} is not {what}", where=option, fix=fix)
        out[name] = given
    return out


def parse_tokenizers(values: list[str], design: Design) -> dict[str, str]:
    served = [s for j in design.spec.judges if (s := j.served()) is not None]
    exact = [s.id for s in served if s.tokenizer]
    fix = f"write --tokenizer JUDGE=NAME with JUDGE one of {', '.join(exact) or '(none)'}"
    return _named(
        values,
        "--tokenizer",
        "JUDGE=NAME",
        exact,
        f"a judge of {design.path} that names a tokenizer",
        fix,
    )


def run_plan(args: argparse.Namespace) -> int:
    from diarylab.experiments.planning.held_plan import basis
    from diarylab.experiments.planning.kept_measure import keep_measures, kept_measures, sent
    from diarylab.experiments.planning.plan import plan_design
    from diarylab.experiments.planning.render import plan_lines
    from diarylab.experiments.planning.render_gpu import gpu_json, gpu_lines, gpu_plan

    design = load_design(args.file)
    rates = parse_rates(args.rate, design)
    if (args.source or args.sample != 8) and not args.measure:
        raise LabError("--from and --sample go with --measure", where="--from", fix="add --measure")
    if args.timeout <= 0:
        raise LabError(f"--timeout {args.timeout:g}", where="--timeout", fix="give seconds > 0")
    if args.sample < 1:
        raise LabError(f"--sample {args.sample}", where="--sample", fix="give 1 or more texts")
    if args.measure and args.measured:
        raise LabError(
            "--measure reads anew, --measured reuses the kept measurement",
            where="--measured",
            fix="give one of them",
        )
    measure = None
    said = basis(None)
    taken: dict[str, Any] = {}
    if args.measured:
        kept = kept_measures(design)
        if kept is None:
            raise LabError(
                f"no measurement kept for this version of {design.path}",
                where="--measured",
                fix="measure first: diarylab plan DESIGN --measure",
            )
        measures, record = kept
        said = basis(record)

        def measure(workload: Any) -> Any:
            return measures

    elif args.measure:
        from pathlib import Path

        from diarylab.experiments.planning.measured import measure_judges, sample_texts

        source = Path(args.source) if args.source else None

        def measure(workload: Any) -> Any:
            texts, where = sample_texts(workload, source, args.sample, design.seed)
            measures = measure_judges(design, workload, texts, where, timeout_s=args.timeout)
            taken.update(measures)
            return measures

    throughputs = parse_throughputs(args.throughput, design)
    plan = plan_design(design, parse_tokenizers(args.tokenizer, design), measure)
    gpus = gpu_plan(plan, args.gpu, rates, throughputs)
    measured_lines: list[str] = []
    if taken:
        kept_at = keep_measures(design, taken, args.sample)
        said = basis(kept_measures(design)[1])  # type: ignore[index]
        for judge, (prompts, http) in sent(taken).items():
            measured_lines.append(
                f"the measurement sent {judge} {prompts:,} prompts in {http:,.0f} HTTP requests"
            )
        measured_lines.append(
            f"kept in {kept_at}: `diarylab run` is held to this plan, and `plan --measured` "
            "shows it again without reading"
        )
    if args.json:
        extra = {"gpu": gpu_json(gpus), "basis": said}
        if taken:
            extra["measure_sent"] = {
                j: {"prompts": p, "http_requests": h} for j, (p, h) in sent(taken).items()
            }
        print(json.dumps(plan.to_json(rates) | extra, sort_keys=True))
    else:
        counts = [] if args.gpu_only else plan_lines(plan, rates)
        lines = [f"plan basis: {said['says']}", *counts, *gpu_lines(gpus)]
        print("\n".join([*lines, *measured_lines]))
    return 0


def parse_throughputs(values: list[str], design: Design) -> dict[str, Throughput]:
    from diarylab.experiments.planning.gpu_hours import Throughput

    spec = design.spec
    known = [*(j.id for j in spec.judges), *(c.id for c in spec.chatbots)]
    if spec.writes:
        known.append(DIARIST)
    fix = (
        "write --throughput NAME=PREFILL,DECODE with NAME one of "
        f"{', '.join(known)} and two token rates per second > 0"
    )
    shape = "NAME=PREFILL,DECODE"
    out = {}
    for name, given in _named(
        values, "--throughput", shape, known, "a model of the design", fix
    ).items():
        try:
            prefill, decode = (float(x) for x in given.split(","))
        except ValueError:
            prefill = decode = math.nan
        if not all(math.isfinite(x) and x > 0 for x in (prefill, decode)):
            raise LabError(
                f"{given!r} is not PREFILL,DECODE", where=f"--throughput {name}", fix=fix
            )
        out[name] = Throughput(prefill, decode)
    return out
