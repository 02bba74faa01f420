"""Wiring judges into steering for `diarylab steer`: a scorer callable from a judge spec (or
the demo heuristic), and the side-by-side printout of `steer try`."""

from __future__ import annotations

import argparse
import textwrap
from collections.abc import Sequence
from itertools import zip_longest
from typing import Any

from diarists.patterns import Pattern
from foundation.errors import LabError
from steering.extract import Scorer, TextScore

FAKE_JUDGE = "fake"


def add_judge_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--judge-base-url", help="served judge: OpenAI-compatible base URL")
    p.add_argument("--judge-api-key-env", help="served judge: environment variable with the key")
    p.add_argument("--judge-tokenizer", help="served judge: its tokenizer, for exact readings")


def judge_options_of(args: argparse.Namespace) -> dict[str, str]:
    options = {
        "base_url": args.judge_base_url,
        "api_key_env": args.judge_api_key_env,
        "tokenizer": args.judge_tokenizer,
    }
    return {k: v for k, v in options.items() if v}


def make_scorer(spec: str, pattern: Pattern, **judge_options: Any) -> Scorer:
    """The scorer for a judge spec: 'fake' is the demo heuristic; anything else goes to the
    rubric's judges, reading pattern and coherence scores for one entry at a time."""
    if spec == FAKE_JUDGE:
        from steering.calibrate import heuristic_scorer

        print("judge 'fake': a word-counting heuristic, NOT a judge; numbers are not findings")
        return heuristic_scorer(pattern.markers)
    try:
        from rubric.entry_scores import score_entry
        from rubric.judges import make_judge
    except ImportError as exc:
        raise LabError(
            f"judge {spec!r} needs rubric.judges and rubric.entry_scores, which this "
            f"installation lacks ({exc})",
            where="--judge",
            fix="use --judge fake for a demo",
        ) from exc
    judge = make_judge(spec, **judge_options)
    spec_of_pattern = [(pattern.id, pattern.name, pattern.definition)]

    def score(texts: Sequence[str]) -> list[TextScore]:
        out = []
        for text in texts:
            if not text.strip():  # the judge refuses empty entries; they carry no pattern
                out.append(TextScore(pattern=0.0, coherence=0.0))
                continue
            scores = score_entry(judge, text, patterns=spec_of_pattern)
            out.append(TextScore(_mean(scores.pattern[pattern.id]), _mean(scores.coherence)))
        return out

    return score


def _mean(reading: object) -> float:
    """A judge reading's expected number; NaN when unreadable (below the coverage floor), which
    calibration leaves out of its means rather than replacing."""
    value = getattr(reading, "mean", None)
    return float("nan") if value is None else float(value)


def side_by_side(left_title: str, left: str, right_title: str, right: str, width: int = 48) -> str:
    def column(title: str, text: str) -> list[str]:
        lines = [title, "─" * width]
        for para in text.strip().splitlines() or [""]:
            lines += textwrap.wrap(para, width) or [""]
        return lines

    rows = zip_longest(column(left_title, left), column(right_title, right), fillvalue="")
    return "\n".join(f"{a:<{width}} │ {b}" for a, b in rows)
