"""Option parsing and printing shared by the `diarylab steer` steps: model, steering and
sampling options, layer and strength lists, output checks, the judge scorer, and the
side-by-side view of `steer try`."""

from __future__ import annotations

import argparse
import hashlib
import json
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import zip_longest
from pathlib import Path
from typing import TYPE_CHECKING, Any

from diarylab.experiments.commands._options import (
    add_local_args,
    judge_spec_of,
    retarget,
)
from diarylab.experiments.commands._options import local_settings as local_settings_of
from diarylab.foundation.errors import LabError

if TYPE_CHECKING:
    from diarylab.diarists.patterns import Pattern
    from diarylab.experiments.engine.store import Store
    from diarylab.rubric.judging.judge_base import Judge
    from diarylab.steering.extract import Scorer


def model_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--model", default="smollm2", help="hub id, folder, or smollm2 (default)")
    add_local_args(p)


def steer_args(p: argparse.ArgumentParser) -> None:
    # checked by the settings schema, not argparse `choices` (whose refusal is a usage block)
    p.add_argument("--scale", default="relative", help="relative (default) or raw")
    p.add_argument("--positions", default="response", help="prompt, response (default) or both")


def sampling_args(p: argparse.ArgumentParser, *, max_new_tokens: int | None = None) -> None:
    """Generation options; defaults are steering's own extraction settings."""
    from diarylab.steering.settings import EXTRACTION_GENERATION as default

    p.add_argument(
        "--max-new-tokens",
        type=int,
        default=max_new_tokens or default.max_new_tokens,
        help="the most tokens a text may have",
    )
    p.add_argument(
        "--temperature", type=float, default=default.temperature, help="sampling temperature"
    )
    p.add_argument("--top-p", type=float, default=default.top_p, help="nucleus sampling mass")


def int_list(text: str) -> list[int]:
    """'20', '18,20,22' or '16-22'."""
    out: list[int] = []
    try:
        for part in filter(None, text.split(",")):
            lo, sep, hi = part.partition("-")
            out += list(range(int(lo), int(hi) + 1)) if sep else [int(part)]
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"{text!r} is not a layer list like 20 or 16-22") from exc
    return out


def float_list(text: str) -> list[float]:
    try:
        return [float(x) for x in text.split(",") if x]
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number list like 0.5,1") from exc


def writable(out: Path, *, folder: bool) -> None:
    """Refuse an --out that cannot be written before any work is done: a folder where a file
    goes (or the reverse), or a file on the way to it."""
    if not folder and out.is_dir():
        raise LabError("--out is a folder", where=str(out), fix="give a file name")
    if folder and out.exists() and not out.is_dir():
        raise LabError("--out is a file", where=str(out), fix="name a folder (new or existing)")
    for parent in out.parents:
        if parent.exists():
            if not parent.is_dir():
                raise LabError(
                    f"--out lies under {parent}, which is a file",
                    where=str(out),
                    fix="choose a path whose folders are folders",
                )
            break


def flat(groups: Sequence[Sequence[float]] | None) -> list:
    return [x for g in groups or [] for x in g]


def load_model(args: argparse.Namespace):  # -> LocalModel, imported late: torch is slow
    from diarylab.model_access.loading import resolve
    from diarylab.model_access.local import LocalModel

    settings = local_settings_of(args)
    try:
        resolve(args.model)
        print(f"loading {args.model} ...", flush=True)
        return LocalModel.load(args.model, settings)
    except LabError as exc:
        if exc.where == "model":
            raise retarget(exc, "--model") from None
        raise


def generation(args: argparse.Namespace) -> dict[str, Any]:
    return {
        "max_new_tokens": args.max_new_tokens,
        "temperature": args.temperature,
        "top_p": args.top_p,
    }


@dataclass(frozen=True)
class CliJudge:
    """The --judge, built before the diarist model loads (a bad judge fails first); None for
    the fake heuristic, which calls no model."""

    judge_id: str
    judge: Judge | None


def judge_of(args: argparse.Namespace) -> CliJudge:
    from diarylab.experiments.profiles.vectors import FAKE_JUDGE
    from diarylab.rubric.judging.building import build_judge, default_load_local

    spec = judge_spec_of(args, prefix="judge-")  # checks the judge options, even for 'fake'
    if args.judge == FAKE_JUDGE:
        return CliJudge(FAKE_JUDGE, None)
    judge = build_judge(spec, default_load_local)
    # One store may see several --judge values over reruns: each judge identity reads its own
    # judgments (a design's judge ids are fixed by its locked file; here the identity is).
    identity = json.dumps(judge.identity(), sort_keys=True, default=str)
    return CliJudge(f"cli-{hashlib.sha256(identity.encode()).hexdigest()[:16]}", judge)


def scorer(cli: CliJudge, pattern: Pattern, store: Store) -> Scorer:
    """The --judge's scorer, its readings kept in `store`."""
    from diarylab.experiments.profiles.vectors import fake_scorer, judge_scorer

    judge = cli.judge
    if judge is None:
        print("judge 'fake': a word-counting heuristic, NOT a judge; numbers are not findings")
        return fake_scorer(pattern)
    return judge_scorer(store, cli.judge_id, lambda: judge, pattern, progress=True)


def store_for(path: Path) -> Store:
    """The store a `steer` step keeps its model calls in (beside its outputs), so a rerun into
    the same output reads back every call it already made."""
    from diarylab.experiments.engine.store import Store

    path.parent.mkdir(parents=True, exist_ok=True)
    return Store(path)


# ------------------------------------------------------------------------- extract
def side_by_side(left_title: str, left: str, right_title: str, right: str, width: int = 48) -> str:
    def column(title: str, text: str) -> list[str]:
        lines = [title, "─" * width]
        for para in text.strip().splitlines() or [""]:
            lines += textwrap.wrap(para, width) or [""]
        return lines

    rows = zip_longest(column(left_title, left), column(right_title, right), fillvalue="")
    return "\n".join(f"{a:<{width}} │ {b}" for a, b in rows)
