"""Tag scores as HealthBench's reference reports them, one chatbot × judge at a time.

The convention follows OpenAI simple-evals `healthbench_eval.py` (`calculate_score`,
`HealthBenchEval.grade_sample`, `_compute_clipped_stats`); this is the lab's own code for it:

- an example-level tag (`theme:…`, `physician_agreed_category:…`; the lab gives MentalHealthBench
  rows `acuity:…`) scores a conversation with its overall (unclipped) score;
- a rubric-level tag (`axis:…`, `level:example`, `level:cluster`, `cluster:…`) scores a
  conversation with the met points of the criteria carrying that tag over those criteria's own
  positive points, and only where they have some (otherwise the tag has no score there);
- each tag's score is the mean over the conversations where it has a score, clipped to [0, 1],
  reported with that count and the standard deviation of the clipped mean over bootstrap
  resamples of those conversations (the reference's `bootstrap_std`; seeded here).

A conversation without an overall score (no positive points, or a criterion ungraded or
unreadable) gives no tag score either: the reference never has one without the other."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

import numpy as np
import pandas as pd

from diarylab.experiments.analysis.bootstrap import draw_counts
from diarylab.experiments.kinds.benchmark.scoring import EXAMPLE_TAGS, TAGS, Reading, credit


@dataclass(frozen=True)
class TagScore:
    tag: str
    level: str  # "example" | "rubric": where the file put the tag
    score: float  # the mean clipped to [0, 1]
    n: int  # conversations with a score for the tag
    bootstrap_std: float


def _split(value: object) -> list[str]:
    return [t for t in str(value).split("|") if t] if isinstance(value, str) else []


def tag_values(graded: pd.DataFrame, reading: Reading) -> dict[tuple[str, str], list[float]]:
    """(level, tag) -> one value per conversation where the tag has a score (sorted by
    conversation id, so the bootstrap draws the same rows however the frame was ordered)."""
    out: dict[tuple[str, str], list[float]] = defaultdict(list)
    if TAGS not in graded:
        return out
    for _, rows in graded.sort_values("conversation").groupby("conversation", sort=True):
        points = rows["points"].to_numpy(float)
        p = rows["p_met"].to_numpy(float)
        positive = points[points > 0].sum()
        if positive <= 0 or np.isnan(p).any():
            continue
        got = credit(p, reading) * points
        overall = got.sum() / positive
        example = _split(rows[EXAMPLE_TAGS].iloc[0]) if EXAMPLE_TAGS in rows else []
        for tag in dict.fromkeys(example):
            out[("example", tag)].append(float(overall))
        by_tag: dict[str, list[int]] = defaultdict(list)
        for i, tags in enumerate(rows[TAGS]):
            for tag in dict.fromkeys(_split(tags)):
                by_tag[tag].append(i)
        for tag, idx in by_tag.items():
            own = points[idx][points[idx] > 0].sum()
            if own > 0:
                out[("rubric", tag)].append(float(got[idx].sum() / own))
    return out


def tag_scores(graded: pd.DataFrame, reading: Reading, resamples: int, seed: int) -> list[TagScore]:
    out = []
    values = tag_values(graded, reading)
    for k, (level, tag) in enumerate(sorted(values)):
        v = np.array(values[(level, tag)])
        weights = draw_counts(v.size, resamples, np.random.default_rng([seed, k]))
        means = np.clip(weights @ v / v.size, 0.0, 1.0)
        out.append(TagScore(tag, level, float(np.clip(v.mean(), 0, 1)), v.size, float(means.std())))
    return out
