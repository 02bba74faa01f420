"""What the `diarylab judge` actions share: the judge the options name, reading a user's text
file, and printing a reading (a line, or JSON with --json)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from diarylab.experiments.commands._options import judge_spec_of
from diarylab.foundation.errors import LabError


def judge_of(args: argparse.Namespace) -> Any:
    """The judge the options name, built once every option has been checked."""
    from diarylab.rubric.judging.building import build_judge, default_load_local

    if not 0.0 <= args.floor <= 1.0:  # also refuses nan
        raise LabError(
            f"coverage floor {args.floor} is not between 0 and 1",
            where="--floor",
            fix="give the least probability on valid answers a reading needs, e.g. 0.5",
        )
    return build_judge(judge_spec_of(args), default_load_local)


def read_text(path: Path, what: str) -> str:
    if not path.is_file():
        raise LabError(f"{what} not found", where=str(path), fix="check the path")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise LabError(
            f"{what} is not UTF-8 text", where=str(path), fix="save the file as UTF-8"
        ) from exc
    if not text.strip():
        raise LabError(f"{what} is empty", where=str(path), fix=f"write the {what}'s text into it")
    return text


# What a reading's record says about how it was read, for diagnosing a wrong one.
HOW_READ = (
    "mode",
    "requests",
    "http_requests",
    "bound",
    "max_error",
    "system_fingerprint",
    "skipped_mass",
    "missing_ids",
    "prompt_tail",
    "first_tokens",
)


def how_read(reading: Any) -> dict[str, Any]:
    return {k: reading.record[k] for k in HOW_READ if k in reading.record}


def number_payload(reading: Any) -> dict[str, Any]:
    return {
        "distribution": list(reading.distribution),
        "mean": reading.mean,
        "mode": reading.mode,
        "coverage": reading.coverage,
        "readable": reading.readable,
        "exact": reading.exact,
        "bound": reading.record.get("bound"),  # certified [lo, hi] for the mean and coverage
        "read": how_read(reading),
        "template": reading.template.to_record() if reading.template else None,
    }


def yes_no_payload(reading: Any) -> dict[str, Any]:
    return {
        "p_yes": reading.p_yes,
        "coverage": reading.coverage,
        "readable": reading.readable,
        "exact": reading.exact,
        "read": how_read(reading),
        "template": reading.template.to_record() if reading.template else None,
    }


def print_result(args: argparse.Namespace, payload: dict[str, Any], summary: str) -> None:
    print(json.dumps(payload, indent=2) if args.json else summary)


def fmt(value: float | None, digits: int = 1) -> str:
    return "unreadable" if value is None else f"{value:.{digits}f}"
