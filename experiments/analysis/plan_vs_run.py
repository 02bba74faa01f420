"""The plan beside the run: for each judge, the prompts and HTTP requests per reading the plan
said (the run folder's plan.json, kept when the run began) and the ones its stored readings
state, by question, with the readings done so far of those planned. `diarylab status` prints
it; a budget is checked against what runs deliver here, reading by reading."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from diarylab.experiments.engine.runfolder import PLAN_FILE
from diarylab.experiments.engine.store import JudgeAsks

QUESTIONS = {"number": "0–100", "yes_no": "yes/no"}
PER_READING = {"number": "number_expected", "yes_no": "yes_no"}


def plan_vs_run(folder: Path, asks: Sequence[JudgeAsks]) -> list[str]:
    path = Path(folder) / PLAN_FILE
    if not path.is_file():
        return ["plan vs run: no plan.json (the kind plans nothing, or the run predates it)"]
    plan = json.loads(path.read_text(encoding="utf-8"))
    lines = ["plan vs run, per reading (planned → stated by the stored readings):"]
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
    return lines


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
