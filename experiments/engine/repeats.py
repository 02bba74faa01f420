"""What every kind's pilot does with its repeats once written (experiments/running/pilot.py): each
repeat's own id, scoring the repeats with every judge through the store, and the pooled
within-prompt SD of a single text's score per judge and score family."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import Any

from diarylab.experiments.engine.judging import judge_tasks
from diarylab.experiments.engine.store import JudgmentRow, Store
from diarylab.experiments.engine.tasks import Task, TextNoise

SEP = "~"  # text_id SEP repeat: a repeat's own id in a pilot's repeats store


def repeat_id(text_id: str, repeat: int) -> str:
    return f"{text_id}{SEP}{repeat}"


def family(item: str) -> str:
    """ "pattern:social_isolation" -> "pattern"; "coherence" -> "coherence"."""
    return item.split(":", 1)[0]


def score_repeats(
    store: Store,
    judge_ids: Sequence[str],
    judge_for: Callable[[str], Any],
    tasks: Sequence[Task],
    floor: float,
) -> None:
    """Every task read by every judge, through the store (a resumed pilot reads, not asks)."""
    for judge_id in judge_ids:
        judge_tasks(
            store,
            judge_id,
            lambda judge_id=judge_id: judge_for(judge_id),  # type: ignore[misc]
            tasks,
            floor,
            lambda n: None,
        )


def pooled_noise(store: Store, repeats: int) -> list[TextNoise]:
    """Pooled within-prompt variance: the mean of each prompt's sample variance (prompts with
    two readable repeats or more), per judge and score family."""
    values: dict[tuple[str, str, str, str], list[float]] = defaultdict(list)
    for judge, target, item, value, readable in store.select(
        JudgmentRow.TABLE, ("judge", "target_id", "item", "value", "readable")
    ):
        if readable and value is not None:
            values[(judge, family(item), item, target.split(SEP)[0])].append(float(value))
    variances: dict[tuple[str, str], list[float]] = defaultdict(list)
    for (judge, fam, _, _), xs in values.items():
        if len(xs) >= 2:
            mean = sum(xs) / len(xs)
            variances[(judge, fam)].append(sum((x - mean) ** 2 for x in xs) / (len(xs) - 1))
    return [
        TextNoise(judge, fam, math.sqrt(sum(v) / len(v)), len(v), repeats)
        for (judge, fam), v in sorted(variances.items())
    ]
