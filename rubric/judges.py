"""Making a judge from a spec, the one entry point the experiment engine and the CLI use.

SPEC: a local model ("smollm2", a hub id, a folder) read exactly through the runtime, or
"litellm:MODEL" (e.g. "litellm:hosted_vllm/mistralai/Mistral-Small-3.1-24B-Instruct-2503") read
through the litellm door, with base_url / api_key_env as transport settings (never part of the
judge's identity or its cache keys)."""

from __future__ import annotations

from typing import Any

from foundation.errors import LabError
from rubric.judge_base import Judge, MemoryCache, RecordCache
from rubric.local_judge import LocalJudge
from rubric.served_judge import ServedJudge

SERVED_PREFIX = "litellm:"

__all__ = ["Judge", "LocalJudge", "MemoryCache", "RecordCache", "ServedJudge", "make_judge"]


def make_judge(
    spec: str,
    *,
    base_url: str | None = None,
    api_key_env: str | None = None,
    tokenizer: str | None = None,
    prefill: bool = True,
    expand_floor: float = 1e-4,
    device: str | None = None,
    dtype: str | None = None,
    revision: str | None = None,
    cache: RecordCache | None = None,
) -> Judge:
    """`tokenizer` (served judges only): the judge model's tokenizer (hub id, folder or
    "smollm2"); with it, a vLLM server is asked for explicit token ids and readings are exact."""
    if not spec or not spec.strip():
        raise LabError("empty judge spec", where="judge", fix="name a model or litellm:MODEL")
    if spec.startswith(SERVED_PREFIX):
        from model_access.served import Endpoint

        model = spec[len(SERVED_PREFIX) :].strip()
        if not model:
            raise LabError(
                f"{spec!r} names no model",
                where="judge",
                fix="write litellm:PROVIDER/MODEL, e.g. litellm:hosted_vllm/NAME",
            )
        endpoint = Endpoint(model=model, api_base=base_url, api_key_env=api_key_env)
        return ServedJudge(
            endpoint,
            tokenizer=_load_tokenizer(tokenizer) if tokenizer else None,
            prefill=prefill,
            expand_floor=expand_floor,
            cache=cache,
        )
    if base_url or api_key_env or tokenizer:
        raise LabError(
            "--base-url, --api-key-env and --tokenizer are for served judges",
            where="judge",
            fix=f"write the judge as litellm:MODEL, or drop those options for {spec!r}",
        )
    from model_access.local import LocalModel

    return LocalJudge(
        LocalModel.load(spec, device=device, dtype=dtype, revision=revision), cache=cache
    )


def _load_tokenizer(spec: str) -> Any:
    from transformers import AutoTokenizer

    from model_access.loading import resolve

    source = resolve(spec)
    kwargs = {"gguf_file": source.gguf_file} if source.gguf_file else {}
    try:
        return AutoTokenizer.from_pretrained(source.location, **kwargs)
    except OSError as exc:
        raise LabError(
            f"cannot load tokenizer {spec!r}: {exc}",
            where="judge tokenizer",
            fix="point at a folder with the judge's tokenizer, or download it first",
        ) from exc
