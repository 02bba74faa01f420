"""Intervals for quantities with a bounded scale — shares in [0, 1], correlations in [−1, 1] —
that stay on it and keep their coverage near the bounds at the lab's cluster counts.

A mean ± t·SE interval of a share at 0.97 over 8 diarists leaves [0, 1] in most datasets and
covers about 74%, and a unanimous sample gives it zero width; a correlation's interval near 1
is cut at ±1. Both are fixed by working on the quantity's own scale, with the same
leave-one-cluster-out jackknife the default interval uses (bootstrap.py):

- a share: the Wilson score interval at the cluster-effective sample size n_eff = p(1 − p)/V
  (V the jackknife variance; Kish's design-effect idea), capped at the rows' own effective
  number, with Student's t at clusters − 1 degrees of freedom in place of z (the small-cluster
  correction Korn and Graubard use for survey proportions). Wilson intervals never leave
  [0, 1], and a unanimous sample (V = 0) gets the width of n_eff = the rows' number.
- a correlation: Fisher's z = atanh(r), its jackknife SE over clusters, t at clusters − 1,
  mapped back with tanh, so the interval never reaches ±1.

tests/test_bounded.py proves the coverage by simulation (shares at p = 0.97 and
correlations near 1, 8 clusters)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from scipy.stats import t as student_t

from diarylab.experiments.analysis.bootstrap import Interval, Statistic, cluster_codes

SHARE_METHOD = "Wilson (cluster-effective n, t)"
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


def wilson(p: float, n_eff: float, critical: float) -> tuple[float, float]:
    """The Wilson score interval of a share p at (effective) sample size n_eff."""
    c2 = critical**2 / n_eff
    centre = (p + c2 / 2) / (1 + c2)
    half = critical / (1 + c2) * math.sqrt(p * (1 - p) / n_eff + c2 / (4 * n_eff))
    return max(0.0, centre - half), min(1.0, centre + half)


def share_interval(
    table: pd.DataFrame,
    statistic: Statistic,
    *,
    cluster: str,
    rows: float,
    level: float = 0.95,
) -> Interval:
    """The interval of a share (a statistic in [0, 1]) over clusters. `rows` is the effective
    number of observations behind it (Kish's n of the weights; the row count when unweighted):
    n_eff never exceeds it, so clustering can only widen the interval."""
    estimate, jack, n = _jackknife(table, statistic, cluster)
    if n < 2 or jack.size < 2 or not np.isfinite(estimate) or rows <= 0:
        return Interval(estimate, math.nan, math.nan, level, SHARE_METHOD, 0, n)
    p = min(1.0, max(0.0, estimate))
    variance = _variance(jack)
    n_eff = rows if variance <= 0 or p in (0.0, 1.0) else min(rows, p * (1 - p) / variance)
    critical = float(student_t.ppf(1 - (1 - level) / 2, n - 1))
    low, high = wilson(p, n_eff, critical)
    return Interval(estimate, low, high, level, SHARE_METHOD, 0, n)


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
