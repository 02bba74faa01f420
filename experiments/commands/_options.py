"""Command-line options shared by several commands, parsed into the settings objects the
packages take (the same objects a design holds)."""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from diarylab.foundation.datafiles import FIX_MARK
from diarylab.foundation.error_words import plain_words
from diarylab.foundation.errors import LabError
from diarylab.model_access.settings import EndpointSettings, LocalSettings

S = TypeVar("S", bound=BaseModel)


def validated(
    schema: type[S],
    values: Mapping[str, Any],
    *,
    prefix: str = "",
    flags: Mapping[str, str] | None = None,
) -> S:
    """Option values as `schema`, or one LabError naming the option at fault (--top-p for
    generation.top_p; `flags` maps a field to an option spelt otherwise, e.g. layers → --layer)."""
    try:
        return schema.model_validate(dict(values))
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        names = [str(x) for x in first["loc"] if isinstance(x, str)]
        field = names[-1] if names else ""
        flag = (flags or {}).get(field) or f"--{prefix}{field.replace('_', '-')}"
        message = str(first["msg"]).removeprefix("Value error, ")
        fix = f"give {flag} a valid value"
        if FIX_MARK in message:
            message, fix = message.split(FIX_MARK, 1)
        got = first.get("input")
        said = plain_words(first["type"], first.get("ctx") or {}, flag, got)
        if said is not None and FIX_MARK not in str(first["msg"]):
            # the same words as a design file's refusal; an option takes its value after a space
            message, fix = said[0], said[1].replace(f"{flag} = ", f"{flag} ")
        elif first["type"] != "value_error" and not isinstance(got, dict | list):
            message = f"{message} (got {got!r})"
        more = len(exc.errors()) - 1
        if more:
            message += f" ({more} more problem(s) after this one)"
        raise LabError(message, where=flag, fix=fix) from None


def retarget(exc: LabError, where: str) -> LabError:
    """The same mistake, named by the option the user typed (e.g. --model, not "model")."""
    text = str(exc)
    if exc.where:
        text = text.removeprefix(f"{exc.where}: ")
    if exc.fix:
        text = text.removesuffix(f" — fix: {exc.fix}")
    return LabError(text, where=where, fix=exc.fix)


def add_local_args(p: argparse.ArgumentParser, *, prefix: str = "") -> None:
    p.add_argument(f"--{prefix}device", help="local model: cpu, cuda, ... (default: best)")
    # no argparse `choices`: argparse refuses with its usage block; the schema says one line
    p.add_argument(
        f"--{prefix}dtype", help="local model: bf16, fp16 or fp32 (default: bf16 on GPU, else fp32)"
    )


def local_settings(args: argparse.Namespace, *, prefix: str = "", **more: Any) -> LocalSettings:
    key = prefix.replace("-", "_")
    values = {
        "device": getattr(args, f"{key}device"),
        "dtype": getattr(args, f"{key}dtype"),
        **more,
    }
    return validated(
        LocalSettings, {k: v for k, v in values.items() if v is not None}, prefix=prefix
    )


def add_endpoint_args(p: argparse.ArgumentParser, *, prefix: str = "") -> None:
    p.add_argument(f"--{prefix}base-url", help="served model: the server's base URL")
    p.add_argument(
        f"--{prefix}api-key-env", help="served model: NAME of the variable holding the key"
    )
    p.add_argument(f"--{prefix}timeout-s", type=float, help="served model: seconds per try")
    p.add_argument(f"--{prefix}max-retries", type=int, help="served model: tries after the first")
    p.add_argument(f"--{prefix}concurrency", type=int, help="served model: requests at once")
    p.add_argument(
        f"--{prefix}prompts-per-request",
        type=int,
        help="served judge read by token ids: prompts sent in one /v1/completions request "
        "(default 16; 1 for a server that takes one prompt at a time, e.g. llama.cpp)",
    )


def endpoint_settings(args: argparse.Namespace, *, prefix: str = "") -> EndpointSettings:
    key = prefix.replace("-", "_")
    names = (
        "base_url", "api_key_env", "timeout_s", "max_retries", "concurrency", "prompts_per_request"
    )  # fmt: skip
    values = {n: getattr(args, f"{key}{n}") for n in names}
    return validated(
        EndpointSettings, {k: v for k, v in values.items() if v is not None}, prefix=prefix
    )


def add_judge_args(p: argparse.ArgumentParser, *, prefix: str = "", required: bool = True) -> None:
    """--judge and its options; with prefix "judge-", the options read --judge-base-url etc."""
    p.add_argument(
        "--judge",
        required=required,
        help="local model (smollm2, hub id, folder) or litellm:MODEL",
    )
    add_endpoint_args(p, prefix=prefix)
    add_local_args(p, prefix=prefix)
    p.add_argument(
        f"--{prefix}tokenizer",
        help="served judges: the judge's tokenizer (hub id in the local cache, or a folder with "
        "tokenizer files; no weights needed): readings go by prompt token ids, exact at "
        "--max-error 0 and within a certified bound otherwise",
    )
    p.add_argument(
        f"--{prefix}mode",
        choices=["exact", "top-k"],
        help="served judges: exact (needs --tokenizer; the default with it) or top-k (chat)",
    )
    p.add_argument(
        f"--{prefix}top-logprobs",
        type=int,
        help="served judges: top log-probabilities per position (default 20 top-k, 0 exact; a "
        "llama.cpp server gives whole distributions with the vocabulary size here)",
    )
    p.add_argument(
        f"--{prefix}reasoning-effort",
        choices=["low", "medium", "high"],
        help="served harmony judges (gpt-oss): the reasoning effort in the prompt (default low)",
    )
    p.add_argument(
        f"--{prefix}node-cutoff",
        type=float,
        help="served exact judges: trie nodes below this probability are not read (default 0)",
    )
    p.add_argument(
        f"--{prefix}max-error",
        type=float,
        help="0–100 readings stop where what is left could move E[n] by less (points; "
        "default 0.05: a bounded reading, its certified bound stored; 0 = read every node: "
        "exact)",
    )
    p.add_argument(
        f"--{prefix}no-prefill",
        action="store_true",
        help="served top-k judges: the server cannot continue an assistant prefill",
    )


SERVED_READING_OPTIONS = (
    "tokenizer",
    "mode",
    "top_logprobs",
    "reasoning_effort",
    "node_cutoff",
    "max_error",
)


def judge_spec_of(args: argparse.Namespace, *, prefix: str = "") -> Any:
    from diarylab.rubric.judging.named_judge import judge_spec

    key = prefix.replace("-", "_")
    served = {name: getattr(args, f"{key}{name}") for name in SERVED_READING_OPTIONS}
    if getattr(args, f"{key}no_prefill"):
        served["prefill"] = False
    return judge_spec(
        args.judge,
        endpoint=endpoint_settings(args, prefix=prefix),
        local=local_settings(args, prefix=prefix),
        served=served,
    )


def pattern_option(text: str, flag: str = "--pattern") -> Any:  # -> diarists.patterns.Pattern
    """A shipped pattern by id, or a pattern file by path; an unknown id is named as the option
    (a bad pattern file is named by its path, as every data file is)."""
    from diarylab.diarists.patterns import load_pattern

    try:
        return load_pattern(text)
    except LabError as exc:
        if exc.where == "pattern":
            raise retarget(exc, flag) from None
        raise


def add_gpu_option(parser: argparse.ArgumentParser, what: str) -> None:
    """`--gpu KIND`, the same option wherever a command sizes for a GPU kind
    (experiments/planning/hardware.toml lists the kinds)."""
    parser.add_argument(
        "--gpu",
        default="H100-80GB",
        metavar="KIND",
        help=f"the GPU kind {what} are for: H100-80GB (default), A100-80GB or L40S-48GB "
        "(experiments/planning/hardware.toml)",
    )
