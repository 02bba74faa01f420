"""`judge probe --rate N`: a served judge's rate in prompts per second, measured on N 0–100
readings of the probe prompt made as a run makes them (in parallel, up to the endpoint's
concurrency, in the judge's own reading mode) — the figure `diarylab plan --rate JUDGE=R`
takes. The same prompt N times shares its prefix in a server's cache more than a run's
prompts do, so a run's own rate may be lower."""

from __future__ import annotations

import time
from typing import Any

from diarylab.rubric.judging.served_judge import ServedJudge
from diarylab.rubric.probe_prompt import number_probe


def measure_rate(judge: ServedJudge, readings: int) -> dict[str, Any]:
    start = time.perf_counter()
    records = judge.records("number", [number_probe()] * readings)
    elapsed = time.perf_counter() - start
    prompts = sum(int(r.get("requests", 1)) for r in records)
    http = round(sum(float(r.get("http_requests", r.get("requests", 1))) for r in records))
    return {
        "readings": readings,
        "prompts": prompts,
        "http_requests": http,
        "seconds": elapsed,
        "prompts_per_s": prompts / elapsed if elapsed > 0 else None,
    }


def rate_line(rate: dict[str, Any]) -> str:
    per_s = rate["prompts_per_s"]
    shown = "unmeasurable" if per_s is None else f"{per_s:.1f} prompts/s"
    return (
        f"rate {shown} ({rate['readings']} readings, {rate['prompts']} prompts, "
        f"{rate['http_requests']} HTTP requests in {rate['seconds']:.1f} s) — "
        "`diarylab plan DESIGN --rate JUDGE_ID=R` takes it"
    )
