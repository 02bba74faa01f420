"""`diarylab judge read|score|rubric`: ask a judge for a 0–100 reading, an entry's scores, or the
behavior rubric on a reply, and print what it read (JSON with --json)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from experiments.commands._options import add_judge_args, judge_spec_of, pattern_option, retarget
from foundation.errors import LabError


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("judge", help="read a judge's probabilities (scores, yes/no, rubric)")
    jsub = p.add_subparsers(dest="judge_command", required=True, metavar="ACTION")

    read = jsub.add_parser("read", help="the number (or yes/no) a judge would write next")
    _judge_options(read)
    source = read.add_mutually_exclusive_group(required=True)
    source.add_argument(
        "--prompt-file", type=Path, help="exact text the model sees (no chat template added)"
    )
    source.add_argument(
        "--message-file",
        type=Path,
        help="text sent as one user message in the judge's chat template",
    )
    read.add_argument(
        "--prefill",
        default="",
        help="with --message-file: start of the judge's answer (e.g. 'Score: ')",
    )
    read.add_argument("--yes-no", action="store_true", help="read P(yes) instead of 0–100")
    read.set_defaults(handler=run_read)

    score = jsub.add_parser("score", help="pattern, coherence and realism of one entry")
    _judge_options(score)
    score.add_argument("--entry-file", type=Path, required=True)
    score.add_argument("--pattern", required=True, help="pattern id (e.g. social_isolation)")
    score.add_argument(
        "--definition-file",
        type=Path,
        help="the pattern's definition as text (instead of the shipped pattern)",
    )
    score.set_defaults(handler=run_score)

    probe = jsub.add_parser(
        "probe",
        help="read a fixed prompt from a served judge: its mode (exact/top-k), P(it starts a "
        "number) and the first tokens the server returns — what `run` checks first",
    )
    add_judge_args(probe)
    probe.add_argument("--json", action="store_true", help="print JSON")
    probe.set_defaults(handler=run_probe)

    rub = jsub.add_parser(
        "rubric",
        help="the behavior rubric on conversations' last replies, with each question's "
        "conditioned share over them",
    )
    _judge_options(rub)
    rub.add_argument(
        "--conversation-file",
        type=Path,
        action="append",
        required=True,
        help="JSON list of {role, content}; the last assistant message is scored (repeat the "
        "option for several conversations)",
    )
    rub.set_defaults(handler=run_rubric)


def _judge_options(p: argparse.ArgumentParser) -> None:
    add_judge_args(p)
    p.add_argument(
        "--floor",
        type=float,
        default=0.5,
        help="coverage floor: readings below it are unreadable (default 0.5)",
    )
    p.add_argument("--json", action="store_true", help="print JSON")


def _judge(args: argparse.Namespace) -> Any:
    """The judge the options name, built once every option has been checked."""
    from rubric.judges import build_judge, default_load_local

    if not 0.0 <= args.floor <= 1.0:  # also refuses nan
        raise LabError(
            f"coverage floor {args.floor} is not between 0 and 1",
            where="--floor",
            fix="give the least probability on valid answers a reading needs, e.g. 0.5",
        )
    return build_judge(judge_spec_of(args), default_load_local)


def _read_text(path: Path, what: str) -> str:
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
HOW_READ = ("mode", "requests", "skipped_mass", "missing_ids", "prompt_tail", "first_tokens")


def _how(reading: Any) -> dict[str, Any]:
    return {k: reading.record[k] for k in HOW_READ if k in reading.record}


def _number(reading: Any) -> dict[str, Any]:
    return {
        "distribution": list(reading.distribution),
        "mean": reading.mean,
        "mode": reading.mode,
        "coverage": reading.coverage,
        "readable": reading.readable,
        "exact": reading.exact,
        "read": _how(reading),
        "template": reading.template.to_record() if reading.template else None,
    }


def _yes_no(reading: Any) -> dict[str, Any]:
    return {
        "p_yes": reading.p_yes,
        "coverage": reading.coverage,
        "readable": reading.readable,
        "exact": reading.exact,
        "read": _how(reading),
        "template": reading.template.to_record() if reading.template else None,
    }


def _print(args: argparse.Namespace, payload: dict[str, Any], summary: str) -> None:
    print(json.dumps(payload, indent=2) if args.json else summary)


def _fmt(value: float | None, digits: int = 1) -> str:
    return "unreadable" if value is None else f"{value:.{digits}f}"


def run_read(args: argparse.Namespace) -> int:
    from rubric.prompts import JudgePrompt

    if args.prompt_file is not None:
        if args.prefill:
            raise LabError(
                "--prefill goes with --message-file",
                where="judge read",
                fix="write the prefill at the end of the prompt file instead",
            )
        # Exactly the file's bytes: a trailing newline an editor adds would change the reading.
        prompt = JudgePrompt.raw(_read_text(args.prompt_file, "prompt file"))
    else:
        text = _read_text(args.message_file, "message file")
        prompt = JudgePrompt.chat([{"role": "user", "content": text}], prefill=args.prefill)
    judge = _judge(args)
    if args.yes_no:
        yn = judge.read_yes_no(prompt, floor=args.floor)
        _print(args, _yes_no(yn), f"P(yes) {_fmt(yn.p_yes, 3)}  coverage {yn.coverage:.3f}")
    else:
        n = judge.read_number(prompt, floor=args.floor)
        _print(args, _number(n), f"mean {_fmt(n.mean)}  mode {n.mode}  coverage {n.coverage:.3f}")
    return 0


def run_probe(args: argparse.Namespace) -> int:
    from rubric.judges import ServedJudgeSpec, build_judge, default_load_local, probe_verdict
    from rubric.probe_prompt import number_probe
    from rubric.served_judge import ServedJudge

    spec = judge_spec_of(args)
    if not isinstance(spec, ServedJudgeSpec):
        raise LabError(
            "the probe is for served judges (a local judge is read exactly by construction)",
            where="--judge",
            fix="name a served judge as litellm:MODEL",
        )
    judge = build_judge(spec, default_load_local)
    assert isinstance(judge, ServedJudge)  # a served spec builds a served judge
    result = judge.probe(number_probe())
    verdict = probe_verdict(spec, result.mode, result.root_coverage)
    payload = {**result.to_record(), "asked_mode": spec.reading_mode, "verdict": verdict}
    lines = [
        f"mode {result.mode} (asked {spec.reading_mode})",
        f"root coverage {result.root_coverage:.3f}",
        f"first tokens {list(result.first_tokens)}",
        f"requests {result.requests}",
    ]
    if result.prompt_tail is not None:
        lines.append(f"prompt ends {result.prompt_tail[-60:]!r}")
    lines.append(verdict)
    _print(args, payload, "\n".join(lines))
    return 0


def _pattern(args: argparse.Namespace) -> tuple[str, str, str]:
    if args.definition_file is not None:
        return args.pattern, args.pattern, _read_text(args.definition_file, "definition file")
    pattern = pattern_option(args.pattern)
    return pattern.id, pattern.name, pattern.definition


def run_score(args: argparse.Namespace) -> int:
    from rubric.entry_scores import score_entry

    entry = _read_text(args.entry_file, "entry file")
    pattern = _pattern(args)
    scores = score_entry(_judge(args), entry, patterns=[pattern], floor=args.floor)
    reading = scores.pattern[pattern[0]]
    payload = {
        "pattern": {"id": pattern[0], **_number(reading)},
        "coherence": _number(scores.coherence),
        "realism": _number(scores.realism),
    }
    _print(
        args,
        payload,
        f"pattern {pattern[0]} {_fmt(reading.mean)}  coherence {_fmt(scores.coherence.mean)}  "
        f"realism {_fmt(scores.realism.mean)}",
    )
    return 0


def _conversation(path: Path) -> list[dict[str, str]]:
    try:
        data = json.loads(_read_text(path, "conversation file"))
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
    replies (Σ p·q / Σ q) and Σ q, the effective number of replies: the rule the report uses
    (rubric/behavior.py conditioned_share)."""
    from rubric.behavior import (
        appropriate,
        effective_replies,
        score_reply,
        share,
        split_conversation,
    )
    from rubric.behavior_rubric import load_behavior_rubric

    parts = []
    for path in args.conversation_file:  # every file checked before the judge loads
        try:
            parts.append(split_conversation(_conversation(path)))
        except LabError as exc:
            raise retarget(exc, str(path)) from None
    judge, rubric = _judge(args), load_behavior_rubric()
    scored = [
        score_reply(judge, entry, reply, history, floor=args.floor, rubric=rubric)
        for history, entry, reply in parts
    ]
    shares = {}
    lines = [f"{'question':28s} {'desired':7s} {'share':>7s} {'Σq (effective replies)':>24s}"]
    for q in rubric.questions:
        mine = [s.questions[q.id] for s in scored]
        value, weight = share(mine), effective_replies(mine)
        lines.append(f"{q.id:28s} {q.desired:7s} {_share(value):>7s} {weight:>24.3f}")
        shares[q.id] = {
            "behavior": q.behavior,
            "desired": q.desired,
            "applies_when": q.applies_when,
            "share": value,
            "appropriate": None if value is None else float(appropriate(value, q.desired)),
            "effective_replies": weight,
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
                "person": {k: _yes_no(r) for k, r in scores.person.items()},
            }
            for path, scores in zip(args.conversation_file, scored, strict=True)
        ],
        "shares": shares,
    }
    _print(args, payload, "\n".join(lines))
    return 0
