"""The plan a run is held to, kept in its folder when it begins (plan.json): the best there is
— from the judges' kept measurement when the design has one (experiments/planning/
kept_measure.py), else the stated figures — with its basis named, and the tokens and GPU-hours
per model. `status` and the report compare the run with it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from diarylab.experiments.engine.contract import Design
from diarylab.experiments.engine.runfolder import PLAN_FILE
from diarylab.experiments.planning.kept_measure import kept_measures
from diarylab.experiments.planning.plan import Plan, plan_design
from diarylab.experiments.planning.render_gpu import gpu_json, gpu_plan
from diarylab.foundation.atomic import write_atomic
from diarylab.foundation.errors import LabError

STATED = (
    "stated: a served judge's bounded 0–100 reading as a confident judge's (its number's path "
    "and few others); a diffuse judge takes up to every trie node, so a bounded judge's "
    "prompts can be several times these"
)


def basis(record: dict[str, Any] | None) -> dict[str, Any]:
    if record is None:
        return {"kind": "stated", "says": STATED}
    return {
        "kind": "measured",
        "says": f"measured on the judges on {record['date']} ({record['sample']} texts per "
        f"question; {record['file']})",
        **record,
    }


def held_plan(design: Design) -> tuple[Plan, dict[str, Any]]:
    """The design's plan from its kept measurement if it has one, and its basis."""
    kept = kept_measures(design)
    if kept is None:
        return plan_design(design), basis(None)
    measures, record = kept
    return plan_design(design, measure=lambda _: measures), basis(record)


def save_plan(design: Design, folder: Path) -> None:
    """Keep the plan beside the run (once: a resumed run keeps the first). A kind that cannot
    plan, or a judge whose cost cannot be counted here, leaves no file: the run goes on."""
    try:
        plan, said = held_plan(design)
        gpus = gpu_json(gpu_plan(plan))
    except LabError:
        return
    kept = plan.to_json({}) | {"basis": said, "gpu": gpus}
    write_atomic(folder / PLAN_FILE, json.dumps(kept, indent=1, sort_keys=True))
