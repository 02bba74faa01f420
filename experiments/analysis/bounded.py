"""Intervals for quantities with a bounded scale — shares in [0, 1], correlations in [−1, 1] —
that stay on it and keep their coverage near the bounds at the lab's cluster counts.

A mean ± t·SE interval of a share at 0.97 over 8 diarists leaves [0, 1] in most datasets and
covers about 74%, and a unanimous sample gives it zero width; a correlation's interval near 1
is cut at ±1. Both are fixed by working on the quantity's own scale, with the same
leave-one-cluster-out jackknife the default interval uses (bootstrap.py):

- a share: the Wilson score interval at the cluster-effective sample size n_eff = p(1 − p)/V
  (V the jackknife variance; Kish's design-effect idea) with Student's t at clusters − 1
  degrees of freedom in place of z (the small-cluster correction Korn and Graubard use for
  survey proportions). n_eff is never below the number of clusters: a diarist's replies, however
  alike, count for at least one observation, which is what they are worth when they are all
  alike (within-diarist correlation 1). A unanimous sample (V = 0) therefore gets the width of
  a unanimous sample of that many diarists, not of that many replies: with replies that
  resemble each other, 128 yeses from 8 diarists say little more than 8. n_eff is not capped at
  the number of replies: V is an estimate from few clusters, and the t quantile pays for its
  noise only if n_eff follows it both ways (capping it made the interval cover 0.98–0.99 when
  replies are independent).
- a correlation: Fisher's z = atanh(r), its jackknife SE over clusters, t at clusters − 1,
  mapped back with tanh, so the interval never reaches ±1.

What a share's interval holds, simulated at 8 diarists over within-diarist correlation 0–0.5,
4–16 replies per diarist and shares 0.5–0.99 (tests/experiments/analysis/test_bounded.py,
bench/small_samples.py): 93–97% while the share is away from its bounds. Near a bound (an estimate
past NEAR_BOUND of 0 or 1) no interval of this family holds both sides at 8 diarists: replies that
are mostly one answer make the data discrete and V a poor reading of the spread, and the coverage
runs from about 0.90 (p 0.9, 16 alike replies per diarist) to 0.98. Such a share
is marked (`near_bound`) and the report says so beside it."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from scipy.stats import t as student_t

from diarylab.experiments.analysis.bootstrap import Interval, Statistic, cluster_codes

SHARE_METHOD = "Wilson (cluster-effective n ≥ clusters, t)"
# A share closer than this to 0 or 1 is marked: its coverage is not held to 93–97% there.
NEAR_BOUND = 0.15
NEAR_BOUND_NOTE = (
    "near 0 or 1 this interval's coverage is not held to 93–97% at 8 diarists: simulated, it "
    "runs from about 0.90 to 0.98 depending on how alike a diarist's replies are "
    "(docs/statistics.md)"
)
CORRELATION_METHOD = "Fisher z (jackknife t)"


def _jackknife(
    table: pd.DataFrame, statistic: Statistic, cluster: str
) -> tuple[float, np.ndarray, int]:
    codes, n = cluster_codes(table, cluster)
    if n == 0:
        return math.nan, np.array([]), 0
    estimate = float(statistic(table, np.ones((1, len(table))))[0])
    leave_one_out = 1.0 - np.eye(n)[:, codes]
    jack = statistic(table, leave_one_out)
    return estimate, jack[np.isfinite(jack)], n


def _variance(jack: np.ndarray) -> float:
    m = jack.size
    return float((m - 1) / m * np.sum((jack - jack.mean()) ** 2))


def wilson(p: np.ndarray, n_eff: np.ndarray, critical: float) -> tuple[np.ndarray, np.ndarray]:
    """The Wilson score interval of shares p at (effective) sample sizes n_eff, elementwise."""
    c2 = critical**2 / n_eff
    centre = (p + c2 / 2) / (1 + c2)
    half = critical / (1 + c2) * np.sqrt(p * (1 - p) / n_eff + c2 / (4 * n_eff))
    return np.maximum(0.0, centre - half), np.minimum(1.0, centre + half)


def share_bounds(
    estimate: np.ndarray, variance: np.ndarray, clusters: int, level: float = 0.95
) -> tuple[np.ndarray, np.ndarray]:
    """Wilson at the cluster-effective n (never below `clusters`) with t at clusters − 1, for
    many shares at once: the one rule share_interval and the simulations use."""
    p = np.clip(np.asarray(estimate, dtype=float), 0.0, 1.0)
    v = np.asarray(variance, dtype=float)
    spread = p * (1 - p)
    with np.errstate(divide="ignore", invalid="ignore"):
        n_eff = np.where((v > 0) & (spread > 0), spread / v, float(clusters))
    n_eff = np.maximum(n_eff, float(clusters))
    critical = float(student_t.ppf(1 - (1 - level) / 2, clusters - 1))
    return wilson(p, n_eff, critical)


def clustered_share_bounds(
    yes: np.ndarray, size: np.ndarray, level: float = 0.95
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The pooled share Σyes/Σsize of datasets × clusters arrays (each cluster's yes count and
    its replies) with its interval: the jackknife of the pooled share in closed form, then
    share_bounds. What share_interval gives on a table of those replies with mean_of."""
    yes, size = np.asarray(yes, dtype=float), np.asarray(size, dtype=float)
    clusters = yes.shape[-1]
    total_yes, total = yes.sum(axis=-1, keepdims=True), size.sum(axis=-1, keepdims=True)
    leave_one_out = (total_yes - yes) / (total - size)
    variance = (
        (clusters - 1)
        / clusters
        * np.sum((leave_one_out - leave_one_out.mean(axis=-1, keepdims=True)) ** 2, axis=-1)
    )
    estimate = (total_yes / total)[..., 0]
    low, high = share_bounds(estimate, variance, clusters, level)
    return estimate, low, high


def near_bound(estimate: float) -> bool:
    """Whether a share is close enough to 0 or 1 that its interval's coverage is not held to
    93–97% at the lab's cluster counts (the module's docstring; the report marks it)."""
    return bool(np.isfinite(estimate) and min(estimate, 1 - estimate) < NEAR_BOUND)


def share_interval(
    table: pd.DataFrame,
    statistic: Statistic,
    *,
    cluster: str,
    level: float = 0.95,
) -> Interval:
    """The interval of a share (a statistic in [0, 1]) over clusters: Wilson at the
    cluster-effective n, never below the number of clusters."""
    estimate, jack, n = _jackknife(table, statistic, cluster)
    if n < 2 or jack.size < 2 or not np.isfinite(estimate):
        return Interval(estimate, math.nan, math.nan, level, SHARE_METHOD, 0, n)
    low, high = share_bounds(np.asarray(estimate), np.asarray(_variance(jack)), n, level)
    return Interval(estimate, float(low), float(high), level, SHARE_METHOD, 0, n)


def correlation_interval(
    table: pd.DataFrame, statistic: Statistic, *, cluster: str, level: float = 0.95
) -> Interval:
    """The interval of a correlation over clusters, through Fisher's z."""
    estimate, jack, n = _jackknife(table, statistic, cluster)
    if n < 3 or jack.size < 2 or not np.isfinite(estimate) or abs(estimate) >= 1:
        return Interval(estimate, math.nan, math.nan, level, CORRELATION_METHOD, 0, n)
    z = np.arctanh(np.clip(jack, -1 + 1e-12, 1 - 1e-12))
    half = float(student_t.ppf(1 - (1 - level) / 2, n - 1)) * math.sqrt(_variance(z))
    centre = math.atanh(estimate)
    return Interval(
        estimate,
        math.tanh(centre - half),
        math.tanh(centre + half),
        level,
        CORRELATION_METHOD,
        0,
        n,
    )
