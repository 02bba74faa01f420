"""GPU-hours and dollars from the plan's tokens (experiments/planning/tokens.py): for each
model, how many GPUs of a named kind hold one copy (its weights and the KV cache of as many of
its longest sequences as it is asked to hold at once), and the GPU-hours its work takes per
phase — from a rate the user measured (`--rate`, requests a second on its copy), from token
rates the user gives (`--throughput`), or else estimated from the hardware table's peaks
(experiments/planning/hardware.py). API models get dollars from litellm's price map."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from diarylab.experiments.planning.hardware import Gpu, Hardware, ModelSize
from diarylab.experiments.planning.prices import price_of
from diarylab.experiments.planning.tokens import ModelWork

MOST_GPUS = 8  # one machine's GPUs: tensor parallelism goes no wider here


@dataclass(frozen=True)
class Throughput:
    """Tokens a second on one GPU, given by the user for one model."""

    prefill: float
    decode: float


@dataclass(frozen=True)
class ModelCost:
    work: ModelWork
    gpus: int | None  # GPUs of the kind that hold one copy; None: unknown or an API model
    hours: Mapping[str, float | None]  # GPU-hours by phase; None: no rate for it
    basis: str  # where the hours come from
    dollars: float | None = None  # an API model's prompt and generated tokens at list price
    note: str = ""

    def total_hours(self) -> float | None:
        values = list(self.hours.values())
        return None if any(v is None for v in values) else float(sum(v or 0 for v in values))


def model_costs(
    works: list[ModelWork],
    hardware: Hardware,
    gpu: Gpu,
    rates: Mapping[str, float],
    throughputs: Mapping[str, Throughput],
) -> list[ModelCost]:
    return [_cost(w, hardware, gpu, rates, throughputs.get(w.who)) for w in works]


def _cost(
    w: ModelWork,
    hardware: Hardware,
    gpu: Gpu,
    rates: Mapping[str, float],
    given: Throughput | None,
) -> ModelCost:
    if w.where == "api":
        return _api(w)
    size = hardware.model(w.model)
    gpus = gpus_needed(hardware, gpu, size, w) if size is not None else None
    if w.who in rates:
        per_copy = gpus or 1
        hours: dict[str, float | None] = {
            p.phase: p.requests / rates[w.who] * per_copy / 3600 for p in w.parts
        }
        unit = "prompts" if w.where == "served" and w.who != "diarist" else "requests"
        return ModelCost(w, gpus, hours, f"measured: {rates[w.who]:g} {unit}/s (--rate)")
    if given is not None:
        seconds = {p.phase: _seconds(p.computed(), p.decoded, given.prefill, given.decode)
                   for p in w.parts}  # fmt: skip
        return ModelCost(w, gpus, _in_hours(seconds), "given tokens/s per GPU (--throughput)")
    if size is None:
        return ModelCost(
            w,
            None,
            {p.phase: None for p in w.parts},
            "no rate",
            note=f"{w.model} is not in experiments/planning/hardware.toml: add its size, or "
            f"give --rate {w.who}=PER_S or --throughput {w.who}=PREFILL,DECODE",
        )
    prefill = hardware.prefill_rate(gpu, size)
    by_phase: dict[str, float | None] = {}
    for p in w.parts:
        decode = hardware.decode_rate(gpu, size, w.concurrency, p.context)
        by_phase[p.phase] = _seconds(p.computed(), p.decoded, prefill, decode)
    return ModelCost(
        w,
        gpus,
        _in_hours(by_phase),
        f"estimate: {gpu.name} peaks × the table's utilisation (hardware.toml)",
    )


def gpus_needed(hardware: Hardware, gpu: Gpu, size: ModelSize, w: ModelWork) -> int | None:
    """The fewest GPUs (a power of two, as tensor parallelism splits) whose memory share holds
    the weights and `concurrency` sequences at the longest length; None: more than one
    machine's."""
    need = size.weights_gb * 1e9 + w.concurrency * w.longest * size.kv_bytes_per_token()
    room = gpu.memory_gb * 1e9 * hardware.assumptions.memory_share
    count = 1
    while count * room < need:
        count *= 2
        if count > MOST_GPUS:
            return None
    return count


def _seconds(computed: float | None, decoded: float, prefill: float, decode: float) -> float | None:
    if computed is None:
        return None
    return computed / prefill + decoded / decode


def _in_hours(seconds: Mapping[str, float | None]) -> dict[str, float | None]:
    return {k: None if v is None else v / 3600 for k, v in seconds.items()}


def _api(w: ModelWork) -> ModelCost:
    price = price_of(w.model)
    prompt = w.total("prompt")
    if price is None or prompt is None:
        why = "no price" if price is None else "prompt tokens not counted"
        return ModelCost(w, None, {}, "API", None, f"{w.model}: {why} in litellm's price map")
    dollars = prompt * price.input_per_token + (w.total("decoded") or 0) * price.output_per_token
    note = (
        f"estimate at list price ({price.source}: ${price.input_per_token * 1e6:g} in, "
        f"${price.output_per_token * 1e6:g} out per million tokens; every reply at its max)"
    )
    return ModelCost(w, None, {}, "API", dollars if math.isfinite(dollars) else None, note)
