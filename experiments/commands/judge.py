"""`diarylab judge read|score|probe|rubric`: ask a judge for a 0–100 reading, an entry's scores,
a served judge's probe, or the behavior rubric on a reply (experiments.commands._judge_rubric.py),
and print what it read (JSON with --json)."""

from __future__ import annotations

import argparse
from pathlib import Path

from diarylab.experiments.commands._judge_io import (
    fmt,
    judge_of,
    number_payload,
    print_result,
    read_text,
    yes_no_payload,
)
from diarylab.experiments.commands._judge_rubric import run_rubric
from diarylab.experiments.commands._options import add_judge_args, judge_spec_of, pattern_option
from diarylab.foundation.errors import LabError


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
    score.add_argument(
        "--entry-file", type=Path, required=True, help="a text file holding the entry to score"
    )
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
        "number), the first tokens the server returns, its system_fingerprint and served dtype "
        "— what `run` checks first; exit status 2 when `run` would refuse the judge",
    )
    add_judge_args(probe)
    probe.add_argument("--json", action="store_true", help="print JSON")
    probe.add_argument(
        "--rate",
        type=int,
        metavar="N",
        help="also time N 0–100 readings of the probe prompt: prompts per second, for "
        "`diarylab plan --rate`",
    )
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


def run_read(args: argparse.Namespace) -> int:
    from diarylab.rubric.prompts import JudgePrompt

    if args.prompt_file is not None:
        if args.prefill:
            raise LabError(
                "--prefill goes with --message-file",
                where="judge read",
                fix="write the prefill at the end of the prompt file instead",
            )
        # Exactly the file's bytes: a trailing newline an editor adds would change the reading.
        prompt = JudgePrompt.raw(read_text(args.prompt_file, "prompt file"))
    else:
        text = read_text(args.message_file, "message file")
        prompt = JudgePrompt.chat([{"role": "user", "content": text}], prefill=args.prefill)
    judge = judge_of(args)
    if args.yes_no:
        yn = judge.read_yes_no(prompt, floor=args.floor)
        line = f"P(yes) {fmt(yn.p_yes, 3)}  coverage {yn.coverage:.3f}"
        print_result(args, yes_no_payload(yn), line)
    else:
        n = judge.read_number(prompt, floor=args.floor)
        line = f"mean {fmt(n.mean)}  mode {n.mode}  coverage {n.coverage:.3f}"
        print_result(args, number_payload(n), line)
    return 0


def run_probe(args: argparse.Namespace) -> int:
    from diarylab.rubric.judging.building import build_judge, default_load_local
    from diarylab.rubric.judging.served_judge import ServedJudge
    from diarylab.rubric.probe_prompt import number_probe

    spec = judge_spec_of(args).served()
    if spec is None:
        raise LabError(
            "the probe is for served judges (a local judge reads its own full distributions: "
            "exactly, or within max_error's certified bound)",
            where="--judge",
            fix="name a served judge as litellm:MODEL",
        )
    if args.rate is not None and args.rate < 1:
        raise LabError(f"--rate {args.rate}", where="--rate", fix="time at least 1 reading")
    judge = build_judge(spec, default_load_local)
    assert isinstance(judge, ServedJudge)  # a served spec builds a served judge
    result = judge.probe(number_probe())
    verdict = spec.probe_verdict(result.mode, result.root_coverage)
    payload = {**result.to_record(), "asked_mode": spec.reading_mode, "verdict": verdict}
    lines = [
        f"mode {result.mode} (asked {spec.reading_mode})",
        f"root coverage {result.root_coverage:.3f}",
        f"first tokens {list(result.first_tokens)}",
        f"requests {result.requests}",
        f"system_fingerprint {result.system_fingerprint or 'none'}",
        f"dtype {result.dtype}",
    ]
    if result.prompt_tail is not None:
        lines.append(f"prompt ends {result.prompt_tail[-60:]!r}")
    lines.append(verdict)
    if args.rate is not None:
        from diarylab.experiments.commands._judge_rate import measure_rate, rate_line

        payload["rate"] = measure_rate(judge, args.rate)
        lines.append(rate_line(payload["rate"]))
    print_result(args, payload, "\n".join(lines))
    return 0 if verdict == "ok" else 2  # what `run` would refuse, a script can tell


def _pattern(args: argparse.Namespace) -> tuple[str, str, str]:
    if args.definition_file is not None:
        return args.pattern, args.pattern, read_text(args.definition_file, "definition file")
    pattern = pattern_option(args.pattern)
    return pattern.id, pattern.name, pattern.definition


def run_score(args: argparse.Namespace) -> int:
    from diarylab.rubric.entry_scores import score_entry

    entry = read_text(args.entry_file, "entry file")
    pattern = _pattern(args)
    scores = score_entry(judge_of(args), entry, patterns=[pattern], floor=args.floor)
    reading = scores.pattern[pattern[0]]
    payload = {
        "pattern": {"id": pattern[0], **number_payload(reading)},
        "coherence": number_payload(scores.coherence),
        "realism": number_payload(scores.realism),
    }
    print_result(
        args,
        payload,
        f"pattern {pattern[0]} {fmt(reading.mean)}  coherence {fmt(scores.coherence.mean)}  "
        f"realism {fmt(scores.realism.mean)}",
    )
    return 0
