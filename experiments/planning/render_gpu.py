"""The plan's GPU part as text and JSON: per model, the GPUs that hold it, its tokens and its
GPU-hours by phase, API dollars, and the sources every estimate rests on."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from diarylab.experiments.planning.gpu_hours import ModelCost, Throughput, model_costs
from diarylab.experiments.planning.hardware import Gpu, Hardware, load_hardware
from diarylab.experiments.planning.plan import Plan
from diarylab.experiments.planning.tokens import model_work
from diarylab.foundation.errors import LabError

DEFAULT_GPU = "H100-80GB"


@dataclass(frozen=True)
class GpuPlan:
    gpu: Gpu
    hardware: Hardware
    costs: tuple[ModelCost, ...]

    def hours(self) -> float | None:
        values = [c.total_hours() for c in self.costs if c.work.where != "api"]
        return None if any(v is None for v in values) else float(sum(v or 0 for v in values))

    def by_phase(self) -> dict[str, float | None]:
        out: dict[str, float | None] = {}
        for c in self.costs:
            for phase, h in c.hours.items():
                have = out.get(phase, 0.0)
                out[phase] = None if h is None or have is None else have + h
        return out

    def gpus_at_once(self) -> int | None:
        """GPUs that hold every model that is not an API's, one copy each, at the same time
        (the diarist and local chatbots on the machine that runs the lab, each served model on
        its own server)."""
        counts = [c.gpus for c in self.costs if c.work.where != "api"]
        return None if any(n is None for n in counts) else sum(n or 0 for n in counts)

    def dollars(self) -> float | None:
        api = [c.dollars for c in self.costs if c.work.where == "api"]
        return None if any(d is None for d in api) else float(sum(d or 0 for d in api))

    def sources(self) -> list[str]:
        a = self.hardware.assumptions
        out = [
            f"{self.gpu.name}: {self.gpu.source} ({self.gpu.dated})",
            f"utilisation: prefill {a.prefill_utilisation:g} of the BF16 peak, decode "
            f"{a.decode_utilisation:g} of the bandwidth, memory share {a.memory_share:g} — "
            f"{a.source}",
        ]
        for c in self.costs:
            size = self.hardware.model(c.work.model)
            if size is not None and c.work.where != "api":
                out.append(f"{size.name}: {size.source} ({size.dated})")
        return list(dict.fromkeys(out))


def gpu_plan(
    plan: Plan,
    gpu_name: str = DEFAULT_GPU,
    rates: Mapping[str, float] | None = None,
    throughputs: Mapping[str, Throughput] | None = None,
) -> GpuPlan:
    hardware = load_hardware()
    gpu = hardware.gpu(gpu_name)
    if gpu is None:
        names = ", ".join(g.name for g in hardware.gpus)
        raise LabError(f"no GPU kind {gpu_name!r}", where="--gpu", fix=f"name one of {names}")
    costs = model_costs(model_work(plan), hardware, gpu, rates or {}, throughputs or {})
    return GpuPlan(gpu, hardware, tuple(costs))


def gpu_lines(g: GpuPlan) -> list[str]:
    out = [
        f"models on {g.gpu.name} (texts at their max_new_tokens: at most; a judge's prompts as "
        "the plan basis says):"
    ]
    for c in g.costs:
        w = c.work
        head = f"  {w.who} ({w.model}, {w.where}):"
        tokens = (
            f"prompt tokens {_n(w.total('prompt'))} (cached {_n(w.total('cached'))}), "
            f"generated ≤ {_n(w.total('decoded'))}"
        )
        if w.where == "api":
            cost = "unknown" if c.dollars is None else f"${c.dollars:,.2f}"
            out += [f"{head} {tokens}; {cost}", f"    {c.note}"]
            continue
        holds = (
            f"{c.gpus} × {g.gpu.name} hold one copy"
            if c.gpus is not None
            else "GPUs unknown"
            if g.hardware.model(w.model) is None
            else f"more than one machine of {g.gpu.name}"
        )
        phases = ", ".join(f"{p} {_h(h)}" for p, h in c.hours.items())
        out += [f"{head} {holds}; {tokens}", f"    GPU-hours: {phases} — {c.basis}"]
        total = c.total_hours()
        if w.most_factor > 1 and total is not None:
            out.append(
                f"    if every 0–100 reading took every trie node (a diffuse judge): "
                f"{w.most_factor:.1f}× the prompts, up to about {_h(total * w.most_factor)}"
            )
        if c.note:
            out.append(f"    {c.note}")
    phases = ", ".join(f"{p} {_h(h)}" for p, h in g.by_phase().items())
    out.append(f"GPU-hours in all: {_h(g.hours())} on {g.gpu.name} ({phases}); an estimate")
    at_once = g.gpus_at_once()
    out.append(
        f"GPUs to hold every model at once: {'unknown' if at_once is None else at_once} × "
        f"{g.gpu.name} (one copy each; a model's phase alone needs only its own)"
    )
    dollars = g.dollars()
    if any(c.work.where == "api" for c in g.costs):
        out.append(f"API dollars in all: {'unknown' if dollars is None else f'${dollars:,.2f}'}"
                   " (an estimate at list price)")  # fmt: skip
    out.append("sources:")
    out += [f"  {s}" for s in g.sources()]
    return out


def gpu_json(g: GpuPlan) -> dict[str, Any]:
    return {
        "gpu": g.gpu.name,
        "gpu_hours": g.hours(),
        "gpu_hours_by_phase": g.by_phase(),
        "api_dollars": g.dollars(),
        "gpus_at_once": g.gpus_at_once(),
        "estimate": True,
        "sources": g.sources(),
        "models": {
            c.work.who: {
                "model": c.work.model,
                "where": c.work.where,
                "gpus": c.gpus,
                "concurrency": c.work.concurrency,
                "longest_tokens": c.work.longest,
                "prompt_tokens": c.work.total("prompt"),
                "cached_tokens": c.work.total("cached"),
                "generated_tokens_at_most": c.work.total("decoded"),
                "requests": c.work.total("requests"),
                "by_phase": {
                    p.phase: {
                        "requests": p.requests,
                        "prompt_tokens": p.prompt,
                        "cached_tokens": p.cached,
                        "generated_tokens_at_most": p.decoded,
                        "gpu_hours": c.hours.get(p.phase),
                    }
                    for p in c.work.parts
                },
                "gpu_hours": c.total_hours() if c.work.where != "api" else None,
                "every_node_factor": c.work.most_factor,
                "basis": c.basis,
                "dollars": c.dollars,
                "note": c.note,
            }
            for c in g.costs
        },
    }


def _n(value: float | None) -> str:
    if value is None:
        return "not counted"
    if value >= 1e6:
        return f"{value / 1e6:.2f} M"
    if value >= 1e4:
        return f"{value / 1e3:.0f} k"
    return f"{value:,.0f}"


def _h(hours: float | None) -> str:
    if hours is None:
        return "no rate"
    return f"{hours:.2f} h" if hours >= 0.1 else f"{hours * 60:.1f} min"
