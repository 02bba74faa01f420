"""`diarylab judge rubric`: the behavior rubric on conversations' last replies, each question's
conditioned share over them, as the report computes it."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from diarylab.experiments.commands._judge_io import (
    judge_of,
    print_result,
    read_text,
    yes_no_payload,
)
from diarylab.experiments.commands._options import retarget
from diarylab.foundation.errors import LabError


def _conversation(path: Path) -> list[dict[str, str]]:
    try:
        data = json.loads(read_text(path, "conversation file"))
    except json.JSONDecodeError as exc:
        raise LabError(
            f"not valid JSON ({exc})",
            where=str(path),
            fix='write the conversation as a JSON list of {"role": ..., "content": ...}',
        ) from exc
    ok = isinstance(data, list) and all(
        isinstance(m, dict) and isinstance(m.get("role"), str) and isinstance(m.get("content"), str)
        for m in data
    )
    if not ok:
        raise LabError(
            'expected a JSON list of {"role": ..., "content": ...}',
            where=str(path),
            fix="write the conversation as a list of messages",
        )
    return data


def _share(value: float | None) -> str:
    return "–" if value is None else f"{value:.3f}"  # None: Σq = 0, no reply it applies to


def run_rubric(args: argparse.Namespace) -> int:
    """Every conversation's reply scored, then per question the conditioned share over the
    replies (Σ p·q / Σ q), Σ q (how many replies the condition is expected to apply to) and
    Kish's effective number of replies (Σq)²/Σq²: the rule the report uses
    (rubric/behavior.py conditioned_share)."""
    from diarylab.rubric.behavior import (
        appropriate,
        kish_n,
        score_reply,
        share,
        split_conversation,
        sum_q,
    )
    from diarylab.rubric.behavior_rubric import load_behavior_rubric

    parts = []
    for path in args.conversation_file:  # every file checked before the judge loads
        try:
            parts.append(split_conversation(_conversation(path)))
        except LabError as exc:
            raise retarget(exc, str(path)) from None
    judge, rubric = judge_of(args), load_behavior_rubric()
    scored = [
        score_reply(judge, entry, reply, history, floor=args.floor, rubric=rubric)
        for history, entry, reply in parts
    ]
    shares = {}
    lines = [f"{'question':28s} {'desired':7s} {'share':>7s} {'Σq':>8s} {'Kish n':>8s}"]
    for q in rubric.questions:
        mine = [s.questions[q.id] for s in scored]
        value, weight, kish = share(mine), sum_q(mine), kish_n(mine)
        lines.append(f"{q.id:28s} {q.desired:7s} {_share(value):>7s} {weight:>8.3f} {kish:>8.3f}")
        shares[q.id] = {
            "behavior": q.behavior,
            "desired": q.desired,
            "applies_when": q.applies_when,
            "share": value,
            "appropriate": None if value is None else float(appropriate(value, q.desired)),
            "sum_q": weight,
            "kish_n": kish,
        }
    payload = {
        "rubric": scored[0].rubric.to_record(),
        "replies": [
            {
                "conversation_file": str(path),
                "questions": {
                    k: {
                        "behavior": q.behavior,
                        "p_yes": q.p_yes,
                        "applies": q.applies,
                        "joint": q.joint,
                        "coverage": q.reading.coverage,
                    }
                    for k, q in scores.questions.items()
                },
                "person": {k: yes_no_payload(r) for k, r in scores.person.items()},
            }
            for path, scores in zip(args.conversation_file, scored, strict=True)
        ],
        "shares": shares,
    }
    print_result(args, payload, "\n".join(lines))
    return 0
