"""What the diary kind supplies to `diarylab pilot` (experiments/running/pilot.py): a copy of the
design with fewer diarists, each first-entry prompt written again `repeats` times and scored (the
noise of one entry's score), and the per-diarist values of every preregistered contrast."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace
from typing import Any, cast

from diarylab.diarists.entry_context import entry_messages
from diarylab.diarists.patterns import load_pattern
from diarylab.experiments.engine.contract import Design, RunContext
from diarylab.experiments.engine.repeats import pooled_noise, repeat_id, score_repeats
from diarylab.experiments.engine.store import Store
from diarylab.experiments.engine.tasks import ContrastSample, Task, TextNoise
from diarylab.experiments.engine.writes import SteeredWrite, write_cached
from diarylab.experiments.kinds.diary.cells import Cell, derived_seed
from diarylab.experiments.kinds.diary.conversations import DiaryWriter, entry_row
from diarylab.experiments.kinds.diary.hypotheses import per_diarist
from diarylab.experiments.kinds.diary.rows import EntryRow
from diarylab.experiments.kinds.diary.schema import DiaryDesignFile
from diarylab.experiments.kinds.diary.tables import load_tables
from diarylab.experiments.kinds.diary.tasks import entry_items
from diarylab.rubric.entry_scores import EntryTemplates, entry_prompts

PILOT_WHY = "a pilot: it measures noise and effects on a few clusters and decides nothing"


def pilot_design(design: Design, diarists: int) -> dict[str, Any]:
    spec = cast(DiaryDesignFile, design.spec)
    raw = dict(design.raw)
    raw["design"] = {**raw["design"], "name": f"{spec.design.name}-pilot"}
    base = design.path.parent
    profiles = [
        p if not p.endswith(".toml") else str((base / p).resolve()) for p in spec.cast.profiles
    ]
    raw["cast"] = {
        **raw["cast"],
        "diarists": spec.cast.diarist_ids[:diarists],
        "profiles": profiles,
    }
    # a pilot measures noise and effects on a few clusters: it decides nothing by design
    raw["analysis"] = {**raw.get("analysis", {}), "no_verdicts": PILOT_WHY}
    return raw


def resample(
    run: RunContext,
    writer: DiaryWriter,
    judge_for: Callable[[str], Any],
    repeats: int,
    store: Store,
) -> list[TextNoise]:
    """Every first entry's prompt written `repeats` more times (seeds of their own, shared by
    twins) and scored by every judge; the pooled within-prompt SD per judge and score family."""
    spec = cast(DiaryDesignFile, run.design.spec)
    firsts: dict[str, Cell] = {}
    for cell in run.cells:
        firsts.setdefault(cell.entry_id(1), cell)
    jobs = [
        (
            cell,
            repeat_id(eid, r),
            derived_seed(run.design.seed, "repeat", cell.twin_place("e", 1), str(r)),
        )
        for eid, cell in firsts.items()
        for r in range(repeats)
    ]
    messages = {
        c.diarist: entry_messages(writer.cards[c.diarist], writer.template, [], [])
        for c, _, _ in jobs
    }

    def row(i: int, result: Any, key: str) -> tuple[EntryRow, ...]:
        return (replace(entry_row(jobs[i][0], 1, writer, result, key), entry_id=jobs[i][1]),)

    write_cached(
        store,
        writer,
        [SteeredWrite(messages[cell.diarist], seed, cell.profile) for cell, _, seed in jobs],
        row,
    )
    tasks = list(_score_tasks(store, spec, [rid for _, rid, _ in jobs]))
    score_repeats(store, [j.id for j in spec.judges], judge_for, tasks, run.design.coverage_floor)
    return pooled_noise(store, repeats)


def _score_tasks(store: Store, spec: DiaryDesignFile, ids: list[str]) -> Any:
    templates = EntryTemplates.load()
    wanted = set(entry_items(spec))
    patterns = [(p.id, p.name, p.definition) for p in map(load_pattern, spec.scores.pattern_ids)]
    refs = {"coherence": templates.coherence.ref, "realism": templates.realism.ref}
    for rid in ids:
        entry = store.get(EntryRow, rid)
        if entry is None or not entry.text.strip():
            continue  # an empty repeat has no score: it leaves the noise estimate
        for item, prompt in entry_prompts(entry.text, patterns, templates).items():
            if item in wanted:
                ref = refs.get(item, templates.pattern.ref)
                yield Task("entry", rid, item, "number", prompt, ref)


def contrast_samples(store: Store, design: Design) -> list[ContrastSample]:
    spec = cast(DiaryDesignFile, design.spec)
    entries = load_tables(store, spec).entries
    out = []
    for h in spec.hypotheses:
        kind = h.contrast.kind
        fam = "pattern" if kind in ("first_entry_pattern", "drift") else kind
        for judge in h.judges:
            table = per_diarist(h.contrast, entries, judge)
            values = tuple(float(v) for v in table["diff"] if not math.isnan(float(v)))
            out.append(ContrastSample(h.id, judge, fam, values))
    return out
