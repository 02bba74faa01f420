"""The plan beside the run: for each judge, the prompts and HTTP requests per reading the plan
said (the run folder's plan.json, kept when the run began) and the ones its stored readings
state, by question, with the readings done so far of those planned. `diarylab status` prints
it; a budget is checked against what runs deliver here, reading by reading."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from diarylab.experiments.engine.progress import read_progress
from diarylab.experiments.engine.runfolder import PLAN_FILE
from diarylab.experiments.engine.store import JudgeAsks

if TYPE_CHECKING:
    import pandas as pd

QUESTIONS = {"number": "0–100", "yes_no": "yes/no"}
PER_READING = {"number": "number_expected", "yes_no": "yes_no"}


def plan_vs_run(
    folder: Path,
    asks: Sequence[JudgeAsks],
    usage: pd.DataFrame | None = None,
    times: bool = False,
) -> list[str]:
    """`usage`: the store's calls and tokens per role × model (analysis/usage.py), for the
    tokens planned per model against those the records state; `times`: the latest run's wall
    time per phase too (`status` only: a report is the same whichever run made the store)."""
    path = Path(folder) / PLAN_FILE
    if not path.is_file():
        return ["plan vs run: no plan.json (the kind plans nothing, or the run predates it)"]
    plan = json.loads(path.read_text(encoding="utf-8"))
    said = plan.get("basis", {}).get("says", "stated (a plan kept before plans named their basis)")
    lines = [
        f"plan vs run, per reading (planned → stated by the stored readings); the plan: {said}"
    ]
    by_judge: dict[str, dict[str, JudgeAsks]] = {}
    for ask in asks:
        by_judge.setdefault(ask.judge, {})[ask.question] = ask
    for judge, readings in sorted(plan.get("readings", {}).items()):
        cost = plan.get("requests", {}).get(judge, {})
        for question, planned in sorted(readings.items()):
            if not planned:
                continue
            done = by_judge.get(judge, {}).get(question)
            lines.append(f"  {judge} {QUESTIONS.get(question, question)}: " + _compare(
                cost, question, planned, done
            ))  # fmt: skip
    if usage is not None:
        lines += _tokens(plan.get("gpu", {}).get("models", {}), usage)
    if times:
        lines += _hours(plan.get("gpu", {}), read_progress(folder))
    return lines


def _hours(gpu: dict[str, Any], progress: dict[str, Any] | None) -> list[str]:
    """The latest run's wall time per phase beside the plan's GPU-hours estimate (on the GPU
    kind it was planned for; the run's own machine may be another)."""
    phases = [p for p in (progress or {}).get("phases", []) if p.get("seconds")]
    if not phases:
        return []
    took = ", ".join(f"{p['name']} {p['seconds'] / 60:.1f} min" for p in phases)
    planned = gpu.get("gpu_hours")
    said = (
        f"; the plan's estimate: {planned:.2f} GPU-hours on {gpu.get('gpu')}"
        if isinstance(planned, int | float)
        else ""
    )
    return [f"  time, the latest run (wall, on its own machine): {took}{said}"]


def _tokens(models: dict[str, Any], usage: pd.DataFrame) -> list[str]:
    """Per model: the tokens planned (every text at its max: at most) against those its call
    records state; for a judge, one prompt's tokens (a reading's records state its prompt's)."""
    out = []
    for who, m in models.items():
        rows = usage[(usage["model"] == who) | (usage["model"] == m["model"])]
        if rows.empty:
            continue
        row = rows.iloc[0]
        parts = []
        if row["completion_recorded"] and m.get("generated_tokens_at_most"):
            parts.append(
                f"generated {int(row['completion_tokens']):,} of ≤ "
                f"{m['generated_tokens_at_most']:,.0f} planned"
            )
        if row["role"] == "judge":
            per = (m.get("prompt_tokens") or 0) / max(m.get("requests") or 1, 1)
            if row["prompt_recorded"]:
                taken = row["prompt_tokens"] / row["prompt_recorded"]
                parts.append(f"tokens a prompt {taken:,.0f} (planned {per:,.0f})")
        elif row["prompt_recorded"] and m.get("prompt_tokens"):
            ratio = row["prompt_tokens"] / m["prompt_tokens"]
            parts.append(
                f"prompt tokens {int(row['prompt_tokens']):,} "
                f"(planned {m['prompt_tokens']:,.0f}, {ratio:.2f}×)"
            )
        if parts:
            out.append(f"  tokens, {who}: " + "; ".join(parts))
    return out


def _compare(cost: dict[str, Any], question: str, planned: int, done: JudgeAsks | None) -> str:
    count = 0 if done is None else done.readings
    head = f"{count:,} of {planned:,} readings"
    if cost.get("mode") == "local":
        return f"{head}; a local judge (no prompts or HTTP requests to compare)"
    per = cost.get("per_reading", {}).get(PER_READING.get(question, ""), None)
    planned_per = "unknown" if per is None else f"{per:g} prompts"
    if done is None or done.prompts is None or not count:
        return f"{head}; planned {planned_per}, nothing stated yet"
    stated = done.prompts / count
    http = "" if done.http_requests is None else f", {done.http_requests / count:.2f} requests"
    ratio = "" if not per else f" ({stated / per:.2f}× the plan)"
    return f"{head}; planned {planned_per} → {stated:.2f} prompts{http}{ratio}"
