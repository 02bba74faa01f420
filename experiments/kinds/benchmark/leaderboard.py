"""The chatbots' benchmark scores with intervals, per judge: overall (raw and on the published
scale), per axis (both conventions), per tag (as HealthBench's reference) and per acuity;
paired comparisons of every two chatbots (sign-flip test on the per-conversation differences,
Holm-corrected per judge, bootstrap interval of the difference); and how the judges compare
(severity, Kendall τ of their rankings).

Intervals are percentile intervals of a conversation bootstrap: one set of resampled
conversations per judge, shared by every chatbot, so paired differences and the anchors' map
see the same draws."""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import stats

from diarylab.experiments.analysis.bootstrap import draw_counts
from diarylab.experiments.analysis.verdicts import holm, sign_flip
from diarylab.experiments.kinds.benchmark.calibrate import AnchorPoint, calibrated
from diarylab.experiments.kinds.benchmark.scoring import (
    AxisKind,
    Convention,
    PerConversation,
    Reading,
    aggregate,
    aligned,
    axis_aggregate,
    excluded,
    per_conversation,
    strata_scores,
)
from diarylab.experiments.kinds.benchmark.tag_scores import TagScore, tag_scores


@dataclass(frozen=True)
class ChatbotScore:
    judge: str
    chatbot: str
    score: float
    low: float
    high: float
    scored: int  # conversations with a score
    excluded: dict[str, int]
    axes_contributed: dict[str, float]  # MentalHealthBench's axis score (points contributed)
    axes_within: dict[str, float]  # HealthBench's per-tag axis score (met over possible)
    strata: dict[str, float]
    mapped: tuple[float, float, float] | None = None  # on the published scale, with interval
    tags: tuple[TagScore, ...] = ()


@dataclass(frozen=True)
class Comparison:
    judge: str
    a: str
    b: str
    difference: float  # score(a) - score(b)
    low: float
    high: float
    n: int  # conversations scored for both
    p: float
    p_holm: float = math.nan
    quantity: str = ""  # what difference, interval and p are all about (`COMPARED`)


@dataclass(frozen=True)
class Board:
    reading: Reading
    convention: Convention
    scores: list[ChatbotScore] = field(default_factory=list)
    comparisons: list[Comparison] = field(default_factory=list)


def _interval(draws: np.ndarray) -> tuple[float, float]:
    finite = draws[np.isfinite(draws)]
    if not finite.size:
        return math.nan, math.nan
    low, high = np.percentile(finite, [2.5, 97.5])
    return float(low), float(high)


def _comparable(values: np.ndarray, convention: Convention) -> np.ndarray:
    """Per-conversation values whose mean difference is what the convention compares."""
    return np.clip(values, 0, 1) if convention == "mentalhealthbench" else values


# One quantity per convention for a paired comparison: its difference, interval and p are all
# about it. MentalHealthBench scores clip each conversation, so the clipped values are compared;
# HealthBench clips only the mean, a display bound that would hide real differences below 0
# (two chatbots at −0.37 and −0.79 both show 0.000), so its comparison is of the unclipped
# per-conversation scores.
COMPARED: dict[str, str] = {
    "mentalhealthbench": "mean per-conversation difference of scores clipped at [0, 1]",
    "healthbench": "mean per-conversation difference of unclipped scores (the mean is clipped "
    "only for the leaderboard)",
}


def board(
    graded: pd.DataFrame,
    convention: Convention,
    reading: Reading,
    resamples: int,
    seed: int,
    anchors: tuple[AnchorPoint, AnchorPoint] | None = None,
) -> Board:
    out = Board(reading, convention)
    for j, judge in enumerate(sorted(set(graded["judge"]))):
        rows = graded[graded["judge"] == judge]
        bots = sorted(set(rows["chatbot"]))
        series = {b: per_conversation(rows[rows["chatbot"] == b], reading) for b in bots}
        ids, matrix = aligned([series[b] for b in bots])
        rng = np.random.default_rng([seed, j])
        weights = draw_counts(len(ids), resamples, rng)
        point = {b: float(aggregate(matrix[i], convention)[0]) for i, b in enumerate(bots)}
        boot = {b: aggregate(matrix[i], convention, weights) for i, b in enumerate(bots)}
        mapped = None
        if anchors and all(a.chatbot in point for a in anchors):
            mapped = calibrated(point, boot, anchors, rng)
        for b in bots:
            low, high = _interval(boot[b])
            out.scores.append(
                ChatbotScore(
                    judge,
                    b,
                    point[b],
                    low,
                    high,
                    int(np.isfinite(series[b].score).sum()),
                    excluded(rows[rows["chatbot"] == b]),
                    _axes(series[b], "contributed"),
                    _axes(series[b], "within"),
                    strata_scores(series[b], convention),
                    mapped[b] if mapped else None,
                    tuple(tag_scores(rows[rows["chatbot"] == b], reading, resamples, seed)),
                )
            )
        family = []
        for (ia, a), (ib, b) in itertools.combinations(enumerate(bots), 2):
            both = np.isfinite(matrix[ia]) & np.isfinite(matrix[ib])
            d = _comparable(matrix[ia][both], convention) - _comparable(
                matrix[ib][both], convention
            )
            test = sign_flip(d, seed=seed)
            # The same conversations' bootstrap draws, the same quantity the test is about.
            w = weights[:, both]
            with np.errstate(invalid="ignore", divide="ignore"):
                low, high = _interval((w @ d) / w.sum(axis=1))
            family.append(
                Comparison(
                    judge,
                    a,
                    b,
                    float(d.mean()) if d.size else math.nan,
                    low,
                    high,
                    int(both.sum()),
                    test.p_two_sided,
                    quantity=COMPARED[convention],
                )
            )
        adjusted = holm([c.p for c in family])
        out.comparisons.extend(
            Comparison(**{**c.__dict__, "p_holm": p}) for c, p in zip(family, adjusted, strict=True)
        )
    return out


def _axes(pc: PerConversation, kind: AxisKind) -> dict[str, float]:
    return {a: float(axis_aggregate(v, kind)[0]) for a, v in pc.axis_parts(kind).items()}


@dataclass(frozen=True)
class Agreement:
    severity: dict[str, float]  # judge -> mean offset of its scores from the judges' mean
    tau: list[tuple[str, str, float, int]]  # (judge, judge, Kendall τ of chatbot ranks, chatbots)


def agreement(scores: list[ChatbotScore]) -> Agreement:
    table = pd.DataFrame([(s.judge, s.chatbot, s.score) for s in scores], columns=["j", "c", "s"])
    wide = table.pivot(index="c", columns="j", values="s")
    mean = wide.mean(axis=1)
    severity = {str(j): float((wide[j] - mean).mean()) for j in wide.columns}
    tau = []
    for a, b in itertools.combinations(wide.columns, 2):
        pair = wide[[a, b]].dropna()
        value = stats.kendalltau(pair[a], pair[b]).statistic if len(pair) >= 2 else math.nan
        tau.append((str(a), str(b), float(value), len(pair)))
    return Agreement(severity, tau)
