"""Verdicts that hold their error rate at the sample sizes the lab runs (8 clusters and up).

The cluster bootstrap's BCa interval stays for display, but at 8 clusters it covers about 89%,
so a verdict read from it is anti-conservative. Verdicts come from an exact sign-flip
permutation test on the per-cluster differences instead: under the null the differences are
symmetric about zero, so every one of the 2ⁿ sign patterns is equally likely and the p-value is
the share of patterns whose mean is at least as extreme as the observed one. It is exact at any
n (discrete: at 8 clusters the smallest two-sided p is 2/256), enumerated up to
`EXACT_LIMIT` clusters and sampled with a fixed seed beyond that.

A family of preregistered hypotheses is corrected by Holm–Bonferroni, per judge. The two-sided
adjusted p decides; the observed sign then says supported or contradicted. Fewer clusters than
the design's minimum never give a verdict."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

import numpy as np
from scipy import stats

Direction = Literal["greater", "less"]
Verdict = Literal["supported", "contradicted", "inconclusive", "too few"]
VERDICTS: tuple[Verdict, ...] = ("supported", "contradicted", "inconclusive", "too few")

MIN_CLUSTERS = 6
EXACT_LIMIT = 16  # 2^16 sign patterns enumerated; beyond that a seeded sample
SAMPLED_PATTERNS = 20_000
ALPHA = 0.05  # two-sided, i.e. 0.025 in the predicted direction
# Sums equal up to float noise count as ties (a pattern "as extreme as" the observed one).
_TIE = 1e-9


@dataclass(frozen=True)
class SignFlip:
    """The sign-flip test of mean difference = `null` (default 0)."""

    n: int
    mean: float
    p_greater: float  # one-sided: evidence the mean is above the null
    p_less: float
    p_two_sided: float
    exact: bool  # all 2ⁿ patterns enumerated (False: a seeded sample)


@lru_cache(maxsize=64)
def _signs(n: int, seed: int) -> tuple[np.ndarray, bool]:
    if n <= EXACT_LIMIT:
        codes = np.arange(2**n, dtype=np.int64)[:, None]
        bits = (codes >> np.arange(n, dtype=np.int64)) & 1
        return 1.0 - 2.0 * bits, True
    rng = np.random.default_rng(seed)
    sampled = rng.choice([-1.0, 1.0], size=(SAMPLED_PATTERNS, n))
    # The identity pattern keeps a sampled p-value valid (never 0).
    return np.vstack([np.ones((1, n)), sampled]), False


def sign_flip(differences: Sequence[float], *, null: float = 0.0, seed: int = 0) -> SignFlip:
    """Exact (or, past EXACT_LIMIT clusters, sampled) sign-flip test on per-cluster values."""
    values = np.asarray([float(d) for d in differences if not math.isnan(float(d))])
    n = len(values)
    if n == 0:
        return SignFlip(0, math.nan, math.nan, math.nan, math.nan, True)
    centred = values - null
    signs, exact = _signs(n, seed)
    sums = signs @ centred
    observed = float(centred.sum())
    scale = _TIE * max(1.0, float(np.abs(centred).sum()))
    p_greater = float(np.mean(sums >= observed - scale))
    p_less = float(np.mean(sums <= observed + scale))
    p_two = float(np.mean(np.abs(sums) >= abs(observed) - scale))
    return SignFlip(n, float(values.mean()), p_greater, p_less, min(1.0, p_two), exact)


def holm(p_values: Sequence[float]) -> tuple[float, ...]:
    """Holm–Bonferroni adjusted p-values, in the input's order (NaN stays NaN, not counted)."""
    indexed = [(p, i) for i, p in enumerate(p_values) if not math.isnan(p)]
    m = len(indexed)
    adjusted = [math.nan] * len(p_values)
    running = 0.0
    for rank, (p, i) in enumerate(sorted(indexed)):
        running = max(running, min(1.0, (m - rank) * p))
        adjusted[i] = running
    return tuple(adjusted)


def decide(
    test: SignFlip,
    adjusted_p: float,
    direction: Direction,
    *,
    min_clusters: int = MIN_CLUSTERS,
    alpha: float = ALPHA,
) -> Verdict:
    """Too few clusters: no verdict; else the adjusted two-sided p decides and the sign names it."""
    if test.n < min_clusters or math.isnan(adjusted_p):
        return "too few"
    if adjusted_p >= alpha:
        return "inconclusive"
    predicted_up = direction == "greater"
    return "supported" if (test.mean > 0) == predicted_up else "contradicted"


def overall(verdicts: Sequence[Verdict]) -> Verdict:
    """Every judge must agree: one verdict from all judges, or inconclusive."""
    if not verdicts or "too few" in verdicts:
        return "too few"
    first = verdicts[0]
    return first if all(v == first for v in verdicts) else "inconclusive"


def verdict_label(verdict: Verdict, cluster_word: str) -> str:
    """A verdict as a report says it: "too few" names the kind's clusters ("too few diarists",
    "too few role cards")."""
    return f"too few {cluster_word}" if verdict == "too few" else verdict


def sign_flip_interval(
    differences: Sequence[float], *, alpha: float = ALPHA, seed: int = 0
) -> tuple[float, float]:
    """The set of nulls the two-sided test does not reject (found by bisection on each side).

    This is the interval the verdict is read from; the tests check its coverage by simulation."""
    values = [float(d) for d in differences if not math.isnan(float(d))]
    if len(values) < 2:
        return (math.nan, math.nan)
    centre = float(np.mean(values))
    span = float(np.ptp(values)) or 1.0

    def rejected(null: float) -> bool:
        return sign_flip(values, null=null, seed=seed).p_two_sided < alpha

    def edge(step: float) -> float:
        inside, outside = centre, centre + step
        while not rejected(outside):
            if abs(outside - centre) > 1e6 * span:
                return math.copysign(math.inf, step)
            inside, outside = outside, centre + 2 * (outside - centre)
        for _ in range(50):
            middle = (inside + outside) / 2
            if rejected(middle):
                outside = middle
            else:
                inside = middle
        return inside

    return (edge(-span), edge(span))


def minimum_detectable_effect(
    sd: float, n: int, *, alpha: float = ALPHA, power: float = 0.8
) -> float:
    """Smallest true mean difference a two-sided test at `alpha` finds with `power`, for `n`
    clusters whose per-cluster values have standard deviation `sd` (the t approximation a
    sign-flip test tracks closely at n ≥ 8). Pass alpha/m for the first step of Holm."""
    if n < 2 or math.isnan(sd):
        return math.nan
    df = n - 1
    return float((stats.t.ppf(1 - alpha / 2, df) + stats.t.ppf(power, df)) * sd / math.sqrt(n))
