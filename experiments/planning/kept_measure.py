"""A `plan --measure` kept beside its design (DESIGN.measured.json), so the measurement is read
once: `plan --measured` shows the plan from it again without reading, and `run` keeps the
measured plan in its folder and is compared with it. A measurement belongs to the design's
bytes: one made for another version of the file is not used (the plan says so)."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

from diarylab.experiments.engine.contract import Design
from diarylab.experiments.planning.measured import JudgeMeasure, Measured
from diarylab.foundation.atomic import write_atomic
from diarylab.foundation.datafiles import file_sha256
from diarylab.foundation.errors import LabError


def kept_path(design: Design) -> Path:
    path = Path(design.path)
    return path.with_name(f"{path.stem}.measured.json")


def keep_measures(design: Design, measures: dict[str, JudgeMeasure], sample: int) -> Path:
    path = kept_path(design)
    kept = {
        "design": str(design.path),
        "design_sha256": file_sha256(Path(design.path)),
        "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "sample": sample,
        "judges": {
            judge: {
                "source": m.source,
                "failed": m.failed,
                "by_question": {
                    q: {
                        "prompts": list(r.prompts),
                        "http": list(r.http),
                        "prompt_tokens": list(r.prompt_tokens),
                    }
                    for q, r in m.by_question.items()
                },  # fmt: skip
            }
            for judge, m in measures.items()
        },
    }
    write_atomic(path, json.dumps(kept, indent=1, sort_keys=True))
    return path


def kept_measures(design: Design) -> tuple[dict[str, JudgeMeasure], dict[str, Any]] | None:
    """The measurement kept for this design's bytes, and its record (date, sample); None when
    there is none or it was made for another version of the file."""
    path = kept_path(design)
    if not path.is_file():
        return None
    try:
        kept = json.loads(path.read_text(encoding="utf-8"))
        if kept.get("design_sha256") != file_sha256(Path(design.path)):
            return None
        measures = {
            judge: JudgeMeasure(
                judge,
                str(m["source"]),
                {
                    q: Measured(q, tuple(r["prompts"]), tuple(r["http"]), tuple(r["prompt_tokens"]))
                    for q, r in m["by_question"].items()
                },  # fmt: skip
                m.get("failed"),
            )
            for judge, m in kept["judges"].items()
        }
    except (ValueError, KeyError, TypeError) as error:
        raise LabError(
            f"the kept measurement is unreadable ({error})",
            where=str(path),
            fix="delete it and measure again: diarylab plan DESIGN --measure",
        ) from None
    return measures, {k: kept[k] for k in ("date", "sample")} | {"file": str(path)}


def sent(measures: dict[str, JudgeMeasure]) -> dict[str, tuple[int, float]]:
    """What the measurement sent each judge: prompts and HTTP requests."""
    return {
        judge: (
            sum(sum(r.prompts) for r in m.by_question.values()),
            sum(sum(r.http) for r in m.by_question.values()),
        )
        for judge, m in measures.items()
    }
