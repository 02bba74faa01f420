"""`diarylab plan DESIGN`: what a design will cost before it runs — texts written per phase,
readings per judge by question, prompts and HTTP requests per judge under its reading mode and
tokenizer, prompt and generated tokens, and, given rates, hours per phase. The counts come from
the kind's own workload (experiments/engine/workload.py, the same numbers its progress total is)
and each judge's reading cost (experiments/planning/costs.py)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from diarylab.experiments.engine.contract import Design, PlanSupport
from diarylab.experiments.engine.workload import Texts, Workload, chunks, read_batches
from diarylab.experiments.planning.costs import reading_cost
from diarylab.experiments.planning.judge_plan import JudgePlan
from diarylab.experiments.planning.measured import JudgeMeasure, with_measures
from diarylab.experiments.planning.plan_json import judge_json
from diarylab.experiments.profiles.refs import profile_ids
from diarylab.foundation.errors import LabError
from diarylab.rubric.judging.judges import LocalJudgeSpec, ServedJudgeSpec
from diarylab.rubric.probe_prompt import number_probe
from diarylab.rubric.prompts import JudgePrompt

YES_NO_SAMPLE = JudgePrompt.chat(
    [{"role": "user", "content": "Does the text say the writer is lonely?"}], prefill="Answer:"
)


@dataclass(frozen=True)
class Plan:
    design: Design
    cells: int
    workload: Workload
    judges: tuple[JudgePlan, ...]

    def texts(self) -> list[tuple[Texts, int]]:
        """Every kind of text and how many are written (per-judge texts once per judge)."""
        n = len(self.judges)
        return [(t, t.count * (n if t.per_judge else 1)) for t in self.workload.texts]

    def generated_tokens(self) -> dict[str, int]:
        """At most, by phase: every written text at its max_new_tokens; judging writes one
        token per prompt."""
        out: dict[str, int] = {}
        for t, count in self.texts():
            if t.model and t.max_tokens:
                out[t.phase] = out.get(t.phase, 0) + count * t.max_tokens
        return out

    def total(self, which: str = "expected") -> float | None:
        counts = [j.requests(which) for j in self.judges]
        return None if any(c is None for c in counts) else sum(c or 0 for c in counts)

    def hours(self, rates: Mapping[str, float]) -> dict[str, float | None]:
        """Per phase, from rates in texts (writers) or prompts (judges) per second; a phase
        with work and no rate for some of it is None."""
        work: dict[str, list[tuple[str, float | None]]] = {}
        for t, count in self.texts():
            if t.model and count and not t.per_judge:
                work.setdefault(t.phase, []).append((t.writer, count))
        for j in self.judges:
            work.setdefault("judging", []).append((j.judge, j.requests("expected")))
        out: dict[str, float | None] = {}
        for phase, items in work.items():
            if any(who not in rates or n is None for who, n in items):
                out[phase] = None
            else:
                out[phase] = sum((n or 0) / rates[who] for who, n in items) / 3600
        return out

    def to_json(self, rates: Mapping[str, float]) -> dict[str, Any]:
        return {
            "design": self.design.name,
            "kind": self.design.kind.name,
            "cells": self.cells,
            "texts": [
                {"phase": t.phase, "what": t.label, "count": n, "model_calls": t.model}
                for t, n in self.texts()
            ],
            "readings": {j.judge: dict(j.readings) for j in self.judges},
            "profile_readings": {j.judge: j.profile_readings for j in self.judges},
            "requests": {j.judge: judge_json(j) for j in self.judges},
            "total": self.total("expected"),
            "total_exact": self.total("exact"),
            "total_worst": self.total("worst"),
            "total_http": _sum([j.http() for j in self.judges]),
            "total_http_if_alike": _sum([j.http(alike=True) for j in self.judges]),
            "tokens": {
                "generated_at_most": self.generated_tokens(),
                "judge_prompt_at_most": {j.judge: j.prompt_tokens() for j in self.judges},
            },
            "rates": dict(rates),
            "hours": self.hours(rates),
            "progress_total": self.workload.units(len(self.judges)),
            "not_counted": list(self.workload.uncounted),
        }


def _sum(values: list[float | None]) -> float | None:
    return None if any(v is None for v in values) else sum(v or 0 for v in values)


def _number_sizes(workload: Workload, spec: LocalJudgeSpec | ServedJudgeSpec) -> list[int]:
    """The batch sizes a run reads this judge's 0–100 readings in (the inline profiles' a
    batch at a time)."""
    width = spec.concurrency
    n = workload.readings.get("number", 0)
    sizes = set(read_batches(workload.together, "number", n, width))
    return sorted(sizes | set(chunks(workload.profile_readings.get(spec.id, 0), width)))


def _reused(workload: Workload) -> Workload:
    """A derived design's work: its texts (and inline profiles) come from the run it reuses,
    so none is written; judges' own texts (grader answers) are still theirs to write."""
    texts = tuple(
        t if t.per_judge else replace(t, count=0, label=f"{t.label} (reused)")
        for t in workload.texts
    )
    return replace(workload, texts=texts, profile_readings={})


def plan_design(
    design: Design,
    tokenizers: Mapping[str, str] | None = None,
    measure: Callable[[Workload], Mapping[str, JudgeMeasure]] | None = None,
) -> Plan:
    """`tokenizers`: judge id -> a tokenizer to count that judge's readings with instead;
    `measure`: reads real prompts with the judges (experiments/planning/measured.py), whose
    per-reading figures then replace the stated judge's."""
    tokenizers = tokenizers or {}
    kind = design.kind
    if not isinstance(kind, PlanSupport):
        raise LabError(
            f"the {kind.name} kind does not count its workload",
            where=str(design.path),
            fix="give the kind a workload() (experiments/engine/contract.py PlanSupport)",
        )
    cells = kind.cells(design, profile_ids(design))
    workload = kind.workload(design, cells)
    if design.spec.derived_from is not None:
        workload = _reused(workload)
    samples = {"number": number_probe(), "yes_no": YES_NO_SAMPLE, **workload.samples}
    answers = sum(t.count for t in workload.texts if t.per_judge)
    measures = measure(workload) if measure is not None else {}
    judges = tuple(
        JudgePlan(
            spec.id,
            workload.readings,
            answers,
            with_measures(
                reading_cost(spec, samples, tokenizers.get(spec.id), _number_sizes(workload, spec)),
                measures.get(spec.id),
            ),
            workload.judged_tokens,
            measures.get(spec.id),
            workload.together,
            workload.profile_readings.get(spec.id, 0),
        )
        for spec in design.spec.judges
    )
    return Plan(design, len(cells), workload, judges)
