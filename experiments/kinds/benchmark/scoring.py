"""Scoring graded criteria, in both published conventions.

Per conversation (one chatbot, one judge): the points of the criteria met over the positive
points possible. "Met" is P(criteria_met = true) ≥ 0.5, the published reading; the expected
score puts P(met) × points in the numerator instead, a smooth second score. Negative criteria
subtract their points when met. A conversation with no positive points (an all-negative rubric)
has no score, as in HealthBench's own code; it is counted, not averaged. A conversation with any
criterion ungraded or unreadable has no score either: nothing is guessed (the report shows the
sensitivity where ungraded counts as not met, `ungraded_as_not_met`).

Overall: mentalhealthbench clips each conversation's score to [0, 1], then averages;
healthbench averages, then clips the mean to [0, 1].

Two axis scores are computed under either convention, because they answer different questions:
- contributed (MentalHealthBench's definition): the axis's met points over the WHOLE
  conversation's positive points, averaged unclipped; the axes add up to the unclipped overall.
  It is the points an axis contributes, not performance on it: a reply meeting every criterion
  scores an axis's share of the points, which depends on how often the axis occurs.
- within (HealthBench's per-tag score): the axis's met points over the axis's OWN positive
  points, per conversation that has any, averaged over those, the mean clipped; a reply meeting
  every criterion scores 1 on every axis.

Scores are computed from a conversations × criteria layout so that the bootstrap can weight
conversations (a resample is a vector of counts) without rebuilding anything."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd

Convention = Literal["mentalhealthbench", "healthbench"]
Reading = Literal["met", "expected"]
AxisKind = Literal["contributed", "within"]
GRADED_COLUMNS = (
    "judge",
    "chatbot",
    "conversation",
    "stratum",
    "criterion",
    "axis",
    "points",
    "p_met",  # NaN: ungraded (malformed answer) or unreadable (coverage under the floor)
)
# Filled by the run's tables; a frame without them reads as every criterion read, no tags.
STATUS, TAGS, EXAMPLE_TAGS = "status", "tags", "example_tags"  # tags: "|"-joined
UNGRADED = "ungraded"


def credit(p_met: np.ndarray, reading: Reading) -> np.ndarray:
    return (p_met >= 0.5).astype(float) if reading == "met" else p_met


@dataclass(frozen=True)
class PerConversation:
    """One chatbot × judge: each conversation's score, and both axis scores' parts."""

    conversations: tuple[str, ...]
    strata: tuple[str, ...]
    score: np.ndarray  # unclipped; NaN where undefined
    contributed: dict[str, np.ndarray]  # NaN where the conversation has no score
    within: dict[str, np.ndarray]  # NaN also where the conversation has no positive axis points

    def axis_parts(self, kind: AxisKind) -> dict[str, np.ndarray]:
        return self.contributed if kind == "contributed" else self.within


def per_conversation(graded: pd.DataFrame, reading: Reading) -> PerConversation:
    """`graded`: the rows of one chatbot × judge (GRADED_COLUMNS)."""
    convs, strata, scores = [], [], []
    axes = sorted(set(graded["axis"]))
    contributed: dict[str, list[float]] = {a: [] for a in axes}
    within: dict[str, list[float]] = {a: [] for a in axes}
    for (conv, stratum), rows in graded.groupby(["conversation", "stratum"], sort=True):
        points = rows["points"].to_numpy(float)
        p = rows["p_met"].to_numpy(float)
        positive = points[points > 0].sum()
        defined = positive > 0 and not np.isnan(p).any()
        got = credit(np.nan_to_num(p), reading) * points
        convs.append(str(conv))
        strata.append(str(stratum))
        scores.append(got.sum() / positive if defined else np.nan)
        for a in axes:
            mask = (rows["axis"] == a).to_numpy()
            own = points[mask & (points > 0)].sum()
            # An axis the conversation lacks contributes 0 to its score: the parts add up.
            contributed[a].append(got[mask].sum() / positive if defined else np.nan)
            within[a].append(got[mask].sum() / own if defined and own > 0 else np.nan)
    return PerConversation(
        tuple(convs),
        tuple(strata),
        np.array(scores, dtype=float),
        {a: np.array(v, dtype=float) for a, v in contributed.items()},
        {a: np.array(v, dtype=float) for a, v in within.items()},
    )


def ungraded_as_not_met(graded: pd.DataFrame) -> pd.DataFrame:
    """The sensitivity the report shows beside the primary table: a criterion the judge never
    answered in a well-formed way counts as not met (P = 0), so its conversation keeps a score.
    Unreadable criteria (an answer was written, its reading fell under the floor) stay out."""
    if STATUS not in graded:
        return graded
    out = graded.copy()
    out.loc[out[STATUS] == UNGRADED, "p_met"] = 0.0
    return out


def aggregate(
    values: np.ndarray, convention: Convention, weights: np.ndarray | None = None
) -> np.ndarray:
    """The convention's overall score of per-conversation `values` (NaN = no score). With
    `weights` (resamples × conversations, counts) one score per resample."""
    w = np.ones((1, values.size)) if weights is None else np.atleast_2d(weights)
    defined = ~np.isnan(values)
    v = np.where(defined, values, 0.0)
    if convention == "mentalhealthbench":
        v = np.clip(v, 0.0, 1.0)
    n = w @ defined.astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = (w @ v) / n
    if convention == "healthbench":
        mean = np.clip(mean, 0.0, 1.0)
    return mean if weights is not None else mean[:1]


def axis_aggregate(
    parts: np.ndarray, kind: AxisKind, weights: np.ndarray | None = None
) -> np.ndarray:
    """An axis score: contributed parts are averaged unclipped (they add up to the unclipped
    overall); within-axis parts are averaged over the conversations with that axis, then the
    mean is clipped, as HealthBench aggregates every tag."""
    if kind == "within":
        return aggregate(parts, "healthbench", weights)
    w = np.ones((1, parts.size)) if weights is None else np.atleast_2d(weights)
    defined = ~np.isnan(parts)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (w @ np.where(defined, parts, 0.0)) / (w @ defined.astype(float))


def score(values: np.ndarray, convention: Convention) -> float:
    return float(aggregate(values, convention)[0])


def excluded(graded: pd.DataFrame) -> dict[str, int]:
    """Why conversations of one chatbot × judge have no score."""
    out = {"no positive points": 0, "ungraded or unreadable criterion": 0}
    for _, rows in graded.groupby("conversation"):
        if (rows["points"] > 0).sum() == 0:
            out["no positive points"] += 1
        elif rows["p_met"].isna().any():
            out["ungraded or unreadable criterion"] += 1
    return out


def strata_scores(pc: PerConversation, convention: Convention) -> dict[str, float]:
    strata = np.array(pc.strata)
    return {s: score(pc.score[strata == s], convention) for s in sorted(set(pc.strata))}


def aligned(series: Sequence[PerConversation]) -> tuple[list[str], np.ndarray]:
    """Conversations × series matrix of scores on the union of conversations (NaN if absent)."""
    ids = sorted({c for pc in series for c in pc.conversations})
    index = {c: i for i, c in enumerate(ids)}
    out = np.full((len(series), len(ids)), np.nan)
    for row, pc in enumerate(series):
        for c, v in zip(pc.conversations, pc.score, strict=True):
            out[row, index[c]] = v
    return ids, out
