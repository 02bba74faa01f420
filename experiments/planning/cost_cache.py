"""A judge's reading cost, kept on disk once worked out. Working it out loads the judge's
tokenizer and reads a stated judge through the reader (about 3 s for the shipped study's two
judges); the figures depend only on what the key names — the judge's settings, the sample
prompts, the tokenizer's files, the batch sizes and the lab's own code — so a second `design
check` or `plan` of the same study reads them back. Anything that changes any of these makes a
new key; a file that cannot be read is worked out again."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Sequence
from contextlib import suppress
from dataclasses import asdict, replace
from functools import lru_cache
from pathlib import Path
from typing import Any

from diarylab.experiments.planning.cost_records import Count, ReadingCost
from diarylab.foundation.atomic import read_kept_json, write_atomic
from diarylab.model_access.embedded import cache_root
from diarylab.model_access.tokenizer_identity import tokenizer_identity
from diarylab.rubric.judging.judges import ServedJudgeSpec
from diarylab.rubric.prompts import JudgePrompt

# The code the figures come from: the reader, the model access, the planner, the foundation.
CODE_ROOTS = ("rubric", "model_access", "experiments/planning", "foundation")


def kept_reading_cost(
    spec: ServedJudgeSpec,
    samples: dict[str, JudgePrompt],
    tokenizer: str,
    batch_sizes: Sequence[int],
    work_out: Callable[[Sequence[int]], ReadingCost],
) -> ReadingCost:
    """`work_out(sizes)` counts with the readings of each batch size in `sizes` walked in
    step. The sizes counted so far are kept together, and a size not yet counted works the
    counts out again with it added, so a design whose cast or entries change reads them back
    once its run's sizes have been seen."""
    asked = sorted(set(batch_sizes))
    identity = tokenizer_identity(tokenizer)
    if identity is None:
        return work_out(asked)
    key = {
        "spec": _counted_settings(spec),
        "samples": {name: asdict(prompt) for name, prompt in sorted(samples.items())},
        "tokenizer": [tokenizer, identity],
        "code": code_digest(),
    }
    digest = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()
    path = cache_folder() / f"{spec.id[:40]}-{digest[:32]}.json"
    kept = read_kept_json(path)
    cost = None
    if kept is not None:
        with suppress(KeyError, TypeError, ValueError):  # another layout: worked out again
            cost = _from_json(kept)
    if cost is None or (spec.max_error > 0 and not set(asked) <= set(cost.number_batches)):
        seen = set(cost.number_batches) if cost is not None else set()
        cost = work_out(sorted(seen | set(asked)))
        if cost.number_exact.basis != "unknown":  # a tokenizer that failed to load: not kept
            write_atomic(path, json.dumps(_to_json(cost)))
    return replace(
        cost,
        number_batches={s: c for s, c in cost.number_batches.items() if s in asked},
        number_batches_alike={s: c for s, c in cost.number_batches_alike.items() if s in asked},
    )


def _counted_settings(spec: ServedJudgeSpec) -> dict[str, Any]:
    """What of the spec the counts depend on: all but where and how its server is reached
    (its address, timeouts, retries, key), of which they see only whether it is the
    researcher's own server (asked once for its log-probabilities)."""
    settings = spec.model_dump(mode="json", exclude={"endpoint"})
    endpoint = spec.endpoint
    return settings | {
        "endpoint": {
            "prompts_per_request": endpoint.prompts_per_request,
            "concurrency": endpoint.concurrency,
            "self_hosted": bool(endpoint.urls),
        }
    }


def cache_folder() -> Path:
    """DIARYLAB_PLAN_COSTS, else plan-costs/ in the lab's cache (DIARYLAB_CACHE)."""
    if os.environ.get("DIARYLAB_PLAN_COSTS"):
        return Path(os.environ["DIARYLAB_PLAN_COSTS"])
    return cache_root() / "plan-costs"


@lru_cache(maxsize=1)
def code_digest() -> str:
    root = Path(__file__).resolve().parents[2]
    digest = hashlib.sha256()
    for folder in CODE_ROOTS:
        for file in sorted((root / folder).rglob("*")):
            if file.suffix in (".py", ".toml") and "__pycache__" not in file.parts:
                digest.update(str(file.relative_to(root)).encode() + b"\0" + file.read_bytes())
    return digest.hexdigest()


def _to_json(cost: ReadingCost) -> dict[str, Any]:
    data = asdict(cost)
    for name in ("number_batches", "number_batches_alike"):
        data[name] = {str(size): count for size, count in data[name].items()}
    return data


def _from_json(data: dict[str, Any]) -> ReadingCost:
    counts = {
        name: Count(**data[name])
        for name in ("number_exact", "number_worst", "number_expected", "yes_no", "probe")
    }
    batches = {
        name: {int(size): Count(**count) for size, count in data[name].items()}
        for name in ("number_batches", "number_batches_alike")
    }
    plain = {k: v for k, v in data.items() if k not in counts and k not in batches}
    fields: dict[str, Any] = {**plain, **counts, **batches}
    return ReadingCost(**fields)
