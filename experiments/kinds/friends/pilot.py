"""What the friends kind supplies to `diarylab pilot` (experiments/running/pilot.py): a copy of the
design with its first N role cards (the clusters), every card keeping as many pairs per condition as
in the full design; one outcome letter per writer card × profile written again `repeats` times
from the same prompt (its exchange so far read from the pilot's store) and scored by every
judge, the noise of a single letter's score; and the per-card values of every preregistered
contrast."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any, cast

from diarylab.experiments.engine.contract import Design, RunContext
from diarylab.experiments.engine.repeats import pooled_noise, repeat_id, score_repeats
from diarylab.experiments.engine.store import Store
from diarylab.experiments.engine.tasks import ContrastSample, Task, TextNoise
from diarylab.experiments.engine.writes import SteeredWrite, write_cached
from diarylab.experiments.kinds.friends.contrast import FIXED
from diarylab.experiments.kinds.friends.letters import (
    LetterWriter,
    exchange_so_far,
    messages_for,
    row_for,
)
from diarylab.experiments.kinds.friends.outcomes import letter_table, per_card, writer_outcomes
from diarylab.experiments.kinds.friends.pairs import Pair, Seat, letter_seed
from diarylab.experiments.kinds.friends.rows import LetterRow
from diarylab.experiments.kinds.friends.schema import FriendsDesignFile
from diarylab.experiments.kinds.friends.tasks import LetterScorer
from diarylab.foundation.errors import LabError

PILOT_WHY = "a pilot: it measures noise and effects on a few clusters and decides nothing"


def _spec(design: Design) -> FriendsDesignFile:
    return cast(FriendsDesignFile, design.spec)


def pilot_design(design: Design, cards: int) -> dict[str, Any]:
    """The design's raw tables with its first `cards` role cards. Shifts past the smaller
    circle are replaced by the smallest free ones, so every card keeps its number of pairs
    per seat × order in each condition and the per-card spread estimates the full design's."""
    spec = _spec(design)
    ids = spec.pairs.card_ids[:cards]
    shifts = {"a_first": spec.pairs.a_first, "b_first": spec.pairs.b_first}
    needed = max(len(s) for s in shifts.values()) + 1
    if cards < needed:
        raise LabError(
            f"{cards} role cards cannot keep the design's {len(spec.pairs.a_first)} + "
            f"{len(spec.pairs.b_first)} shifts (each card's pairs per condition)",
            where=f"diarylab pilot --diarists {cards} ({design.path} [pairs])",
            fix=f"give --diarists {needed} or more",
        )
    raw = dict(design.raw)
    raw["design"] = {**raw["design"], "name": f"{spec.design.name}-pilot"}
    raw["pairs"] = {
        **raw.get("pairs", {}),
        "cards": ids,
        **{name: _fit(s, cards) for name, s in shifts.items()},
    }
    base = design.path.parent
    steered = [
        str((base / p).resolve()) if p.endswith(".toml") else p for p in spec.conditions.steered
    ]
    raw["conditions"] = {**raw["conditions"], "steered": steered}
    # a pilot measures noise and effects on a few clusters: it decides nothing by design
    raw["analysis"] = {**raw.get("analysis", {}), "no_verdicts": PILOT_WHY}
    return raw


def _fit(shifts: Sequence[int], cards: int) -> list[int]:
    """Shifts 1..cards-1 kept; each one past that replaced by the smallest shift not yet used."""
    kept = [s for s in shifts if s < cards]
    free = iter(s for s in range(1, cards) if s not in kept)
    return [s if s < cards else next(free) for s in shifts]


def repeated_writers(pairs: Sequence[Pair]) -> list[tuple[Pair, Seat]]:
    """One model-writing seat per role card × own profile, the first in design order: the
    writers one of whose letters is written again."""
    chosen: dict[tuple[str, str], tuple[Pair, Seat]] = {}
    for pair in pairs:
        for seat in ("A", "B"):
            if pair.profile(seat) != FIXED:
                chosen.setdefault((pair.card(seat), pair.profile(seat)), (pair, seat))
    return list(chosen.values())


def resample(
    run: RunContext,
    writer: LetterWriter,
    judge_for: Callable[[str], Any],
    repeats: int,
    store: Store,
) -> list[TextNoise]:
    """Each chosen writer's first outcome letter written `repeats` more times from its stored
    prompt (seeds of their own) and scored by every judge for every [scores] item; the pooled
    within-prompt SD per judge and score family."""
    spec = _spec(run.design)
    k = min(spec.outcome.letters)
    jobs = []
    for pair, seat in repeated_writers(run.cells):
        position = pair.order().index((seat, k)) + 1
        earlier = exchange_so_far(run.store, pair, position - 1)
        messages = messages_for(writer, pair, seat, earlier)
        for r in range(repeats):
            rid = repeat_id(pair.letter_id(seat, k), r)
            jobs.append((pair, seat, position, messages, rid, letter_seed(run.design.seed, rid)))

    def row(i: int, result: Any, key: str) -> tuple[LetterRow, ...]:
        pair, seat, position, _, rid, _ = jobs[i]
        letter = row_for(pair, seat, k, position, writer, None, result, key)
        return (replace(letter, letter_id=rid),)

    write_cached(
        store,
        writer,
        [SteeredWrite(m, s, pair.profile(seat)) for pair, seat, _, m, _, s in jobs],
        row,
    )
    scorer = LetterScorer.load(spec.scores)
    tasks: list[Task] = []
    for *_, rid, _ in jobs:
        letter = store.get(LetterRow, rid)
        if letter is not None and letter.text.strip():  # an empty repeat has no score
            tasks.extend(scorer.tasks(letter))
    score_repeats(store, [j.id for j in spec.judges], judge_for, tasks, run.design.coverage_floor)
    return pooled_noise(store, repeats)


def contrast_samples(store: Store, design: Design) -> list[ContrastSample]:
    spec = _spec(design)
    outcomes = writer_outcomes(letter_table(store), spec.outcome.letters)
    out = []
    for h in spec.hypotheses:
        for judge in h.judges:
            diffs = per_card(h.contrast, outcomes, judge)["diff"]
            values = tuple(float(v) for v in diffs if not math.isnan(float(v)))
            out.append(ContrastSample(h.id, judge, "pattern", values))
    return out
