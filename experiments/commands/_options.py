"""Command-line options shared by several commands, parsed into the settings objects the
packages take (the same objects a design holds)."""

from __future__ import annotations

import argparse
from typing import Any

from foundation.datafiles import validate
from model_access.settings import EndpointSettings, LocalSettings


def add_local_args(p: argparse.ArgumentParser, *, prefix: str = "") -> None:
    p.add_argument(f"--{prefix}device", help="local model: cpu, cuda, ... (default: best)")
    p.add_argument(
        f"--{prefix}dtype", choices=["bf16", "fp16", "fp32"], help="local model: default per device"
    )


def local_settings(args: argparse.Namespace, *, prefix: str = "", **more: Any) -> LocalSettings:
    key = prefix.replace("-", "_")
    values = {
        "device": getattr(args, f"{key}device"),
        "dtype": getattr(args, f"{key}dtype"),
        **more,
    }
    return validate(LocalSettings, {k: v for k, v in values.items() if v is not None}, "options")


def add_endpoint_args(p: argparse.ArgumentParser, *, prefix: str = "") -> None:
    p.add_argument(f"--{prefix}base-url", help="served model: the server's base URL")
    p.add_argument(
        f"--{prefix}api-key-env", help="served model: NAME of the variable holding the key"
    )
    p.add_argument(f"--{prefix}timeout-s", type=float, help="served model: seconds per try")
    p.add_argument(f"--{prefix}max-retries", type=int, help="served model: tries after the first")
    p.add_argument(f"--{prefix}concurrency", type=int, help="served model: requests at once")


def endpoint_settings(args: argparse.Namespace, *, prefix: str = "") -> EndpointSettings:
    key = prefix.replace("-", "_")
    names = ("base_url", "api_key_env", "timeout_s", "max_retries", "concurrency")
    values = {n: getattr(args, f"{key}{n}") for n in names}
    return validate(EndpointSettings, {k: v for k, v in values.items() if v is not None}, "options")


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
        help="served judges: the judge's tokenizer, for exact readings through vLLM's "
        "logprob_token_ids",
    )
    p.add_argument(
        f"--{prefix}no-prefill",
        action="store_true",
        help="served judges: the server cannot continue an assistant prefill",
    )


def judge_spec_of(args: argparse.Namespace, *, prefix: str = "") -> Any:
    from rubric.judges import judge_spec

    key = prefix.replace("-", "_")
    return judge_spec(
        args.judge,
        endpoint=endpoint_settings(args, prefix=prefix),
        local=local_settings(args, prefix=prefix),
        tokenizer=getattr(args, f"{key}tokenizer"),
        prefill=not getattr(args, f"{key}no_prefill"),
    )
