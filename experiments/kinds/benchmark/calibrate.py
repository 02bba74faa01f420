"""Placing the lab's scores on the published scale with two anchor models.

Two chatbots whose published scores are known run through the same pipeline; the line through
(lab score, published score) of the two is the map. It is exact on the anchors, so its
uncertainty is theirs: in every bootstrap resample the anchors' lab scores are recomputed from
the same resampled conversations as every other chatbot's, and their published scores are
drawn from normal distributions with the published standard errors (seeded). The mapped
interval of a chatbot is the percentile interval of its mapped score over the resamples."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class AnchorPoint:
    chatbot: str
    published: float
    se: float


def line(
    raw: np.ndarray, r1: np.ndarray, r2: np.ndarray, p1: np.ndarray, p2: np.ndarray
) -> np.ndarray:
    """The map through (r1, p1) and (r2, p2) applied to `raw`; NaN where r1 == r2."""
    with np.errstate(invalid="ignore", divide="ignore"):
        slope = np.where(r1 != r2, (p2 - p1) / (r2 - r1), np.nan)
    return p1 + (raw - r1) * slope


def published_draws(
    anchors: tuple[AnchorPoint, AnchorPoint], resamples: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    a, b = anchors
    return (
        a.published + a.se * rng.standard_normal(resamples),
        b.published + b.se * rng.standard_normal(resamples),
    )


def calibrated(
    point: dict[str, float],
    boot: dict[str, np.ndarray],
    anchors: tuple[AnchorPoint, AnchorPoint],
    rng: np.random.Generator,
) -> dict[str, tuple[float, float, float]]:
    """chatbot -> (mapped score, low, high) on the published scale. `point`: each chatbot's lab
    score; `boot`: its lab score in each resample (the same resamples for every chatbot)."""
    a, b = anchors
    resamples = len(next(iter(boot.values())))
    p1, p2 = published_draws(anchors, resamples, rng)
    out = {}
    for bot, raw in point.items():
        mapped = line(
            np.array([raw]),
            np.array([point[a.chatbot]]),
            np.array([point[b.chatbot]]),
            np.array([a.published]),
            np.array([b.published]),
        )[0]
        draws = line(boot[bot], boot[a.chatbot], boot[b.chatbot], p1, p2)
        finite = draws[np.isfinite(draws)]
        low, high = np.percentile(finite, [2.5, 97.5]) if finite.size else (np.nan, np.nan)
        out[bot] = (float(mapped), float(low), float(high))
    return out
