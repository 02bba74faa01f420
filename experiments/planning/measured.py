"""`plan --measure`: each served judge's cost per reading measured on the judge itself, not
assumed. A seeded sample of real texts — an earlier run's or a pilot's (`--from DIR`: the texts
its judges read), else stand-ins drawn from the lab's role cards (their situations, in the
card's own words) — is put into the design's own prompts (the kind's `sample_with`) and read by
the judge as a run reads it; what the readings' records state (prompts, HTTP requests, prompt
tokens) gives the per-reading mean and range the plan extrapolates from. A judge whose server
does not answer stops the plan at once (exit 2, naming it); one that answers but fails a
reading keeps the stated-judge assumption, and the plan says why."""

from __future__ import annotations

import random
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from diarylab.diarists.cards import load_cards
from diarylab.experiments.checks.reach import REACH_TIMEOUT_S, check_reachable
from diarylab.experiments.engine.contract import Design
from diarylab.experiments.engine.workload import Workload, read_batches
from diarylab.experiments.planning.cost_records import Count, ReadingCost
from diarylab.foundation.errors import Collector, LabError
from diarylab.rubric.judging.building import build_judge, default_load_local


@dataclass(frozen=True)
class Measured:
    """One judge's readings of one question on the sampled texts."""

    question: str
    prompts: tuple[int, ...]
    http: tuple[float, ...]  # a yes/no reading in a prompt list: its share of the list
    prompt_tokens: tuple[int, ...]

    @property
    def mean_prompts(self) -> float:
        return statistics.fmean(self.prompts)

    @property
    def mean_http(self) -> float:
        return statistics.fmean(self.http)


@dataclass(frozen=True)
class JudgeMeasure:
    judge: str
    source: str  # where the texts came from
    by_question: Mapping[str, Measured]
    failed: str | None = None  # why nothing was measured (the plan then keeps its assumption)


def sample_texts(
    workload: Workload, source: Path | None, count: int, seed: int
) -> tuple[list[str], str]:
    """`count` texts, seeded: from a run folder's judged tables, else from the role cards."""
    if source is not None:
        from diarylab.experiments.frames.reader import open_run

        with open_run(source) as run:
            texts = run.texts()
        pool = [
            t for t, table in zip(texts["text"], texts["table"], strict=True)
            if table in workload.text_tables and str(t).strip()
        ]  # fmt: skip
        where = f"{len(pool)} texts of {source}"
    else:
        pool = [f"{c.situation} {c.cares_about}" for c in load_cards()]
        where = "stand-ins from the lab's role cards (situation, what the writer cares about)"
    if not pool:
        raise LabError(
            "no texts to measure on",
            where=str(source) if source else "--measure",
            fix="name a run folder whose texts a judge of this design reads (--from DIR)",
        )
    rng = random.Random(seed)
    picked = rng.sample(pool, min(count, len(pool)))
    return picked, where


def measure_judges(
    design: Design,
    workload: Workload,
    texts: Sequence[str],
    where: str,
    *,
    timeout_s: float = REACH_TIMEOUT_S,
) -> dict[str, JudgeMeasure]:
    """Each served judge of the design reads every sampled text's prompts, as a run does.
    Every judge's server is asked first (experiments/checks/reach.py): one that does not
    answer within `timeout_s` stops the plan with one error per judge, before any reading."""
    if workload.sample_with is None:
        raise LabError(
            f"the {design.kind.name} kind gives no prompts on a real text",
            where="--measure",
            fix="plan without --measure (the stated-judge assumption)",
        )
    served = [(i, spec) for i, judge in enumerate(design.spec.judges) if (spec := judge.served())]
    found = Collector()
    for i, spec in served:
        with found.check():
            check_reachable(spec.model, spec.endpoint, f"{design.path} judges[{i}]", timeout_s)
    found.raise_any()
    prompts = [workload.sample_with(text) for text in texts]
    out: dict[str, JudgeMeasure] = {}
    for _, spec in served:  # a local judge costs no prompts or HTTP requests: counted in readings
        try:
            judge = build_judge(spec, default_load_local)
            by_question = {}
            for question in sorted({q for p in prompts for q in p}):
                asked = [p[question] for p in prompts if question in p]
                # read as the run reads them: its most common batch together (a bounded
                # judge's readings in step share HTTP requests)
                n = workload.readings.get(question, 0)
                sizes = read_batches(workload.together, question, n, spec.endpoint.concurrency)
                size = max(sizes, key=lambda s: (sizes[s], s)) if sizes else len(asked)
                records = [
                    record
                    for k in range(0, len(asked), max(size, 1))
                    for record in judge.records(question, asked[k : k + size])  # type: ignore[arg-type]
                ]
                by_question[question] = Measured(
                    question,
                    tuple(int(r.get("requests", 1)) for r in records),
                    tuple(float(r.get("http_requests", 1)) for r in records),
                    tuple(int(r.get("prompt_tokens") or 0) for r in records),
                )
            out[spec.id] = JudgeMeasure(spec.id, where, by_question)
        except (LabError, OSError) as error:
            out[spec.id] = JudgeMeasure(spec.id, where, {}, failed=str(error).split(" — fix")[0])
    return out


def with_measures(cost: ReadingCost, measure: JudgeMeasure | None) -> ReadingCost:
    """The cost with the judge's measured means in place of the stated judge's, and a note
    saying which figures were measured on what (or why none could be)."""
    if measure is None:
        return cost
    if measure.failed or not measure.by_question:
        why = measure.failed or "no prompts to read"
        return replace(cost, note=f"not measured ({why}): the stated judge's figures stand; "
                       + cost.note)  # fmt: skip
    number, yes_no = measure.by_question.get("number"), measure.by_question.get("yes_no")
    said = []
    for m in (number, yes_no):
        if m is not None:
            http = f" / {m.mean_http:.1f} HTTP requests" if m.question == "number" else ""
            said.append(
                f"{'0–100' if m.question == 'number' else 'yes/no'} {m.mean_prompts:.1f} prompts "
                f"({min(m.prompts)}–{max(m.prompts)}){http}"
            )
    note = (
        f"measured on {len(next(iter(measure.by_question.values())).prompts)} readings per "
        f"question ({measure.source}): " + "; ".join(said) + "; " + cost.note
    )
    return replace(
        cost,
        number_expected=cost.number_expected if number is None
        else Count(number.mean_prompts, number.mean_http, "measured"),
        # a yes/no reading's HTTP requests follow from how many go in one list (JudgePlan
        # .yes_no_http), not from the sample's own list
        yes_no=cost.yes_no if yes_no is None
        else Count(yes_no.mean_prompts, yes_no.mean_prompts, "measured"),
        note=note,
    )  # fmt: skip
