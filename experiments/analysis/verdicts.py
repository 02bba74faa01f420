"""Verdicts that hold their error rate at the sample sizes the lab runs (8 clusters and up).

At 8 clusters the cluster bootstrap's intervals cover about 85–89%, so a verdict read from them
would be anti-conservative. Verdicts come from an exact sign-flip permutation test on the
per-cluster differences instead, and the interval beside a verdict is that test inverted
(`sign_flip_bounds`, in closed form): under the null the differences are
symmetric about zero, so every one of the 2ⁿ sign patterns is equally likely and the p-value is
the share of patterns whose mean is at least as extreme as the observed one. It is exact at any
n (discrete: at 8 clusters the smallest two-sided p is 2/256), enumerated up to
`EXACT_LIMIT` clusters and sampled with a fixed seed beyond that.

Under the lab's rule a family of preregistered hypotheses is corrected by Holm–Bonferroni, per
judge: the two-sided adjusted p decides and the observed sign says supported or contradicted
(`decide`). The other rule, and the MDE of either, are in rules.py. Fewer clusters than the
design's minimum never give a verdict."""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

import numpy as np

Direction = Literal["greater", "less"]
Verdict = Literal["supported", "contradicted", "inconclusive", "too few"]
VERDICTS: tuple[Verdict, ...] = ("supported", "contradicted", "inconclusive", "too few")

MIN_CLUSTERS = 6
EXACT_LIMIT = 16  # 2^16 sign patterns enumerated; beyond that a seeded sample
SAMPLED_PATTERNS = 20_000
SUMS_AT_ONCE = 4_000_000  # pattern sums held at once (32 MB of float64)
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
def _signs(
    n: int, seed: int, exact_limit: int = EXACT_LIMIT, sampled: int = SAMPLED_PATTERNS
) -> tuple[np.ndarray, bool]:
    if n <= exact_limit:
        codes = np.arange(2**n, dtype=np.int64)[:, None]
        bits = (codes >> np.arange(n, dtype=np.int64)) & 1
        return 1.0 - 2.0 * bits, True
    rng = np.random.default_rng(seed)
    drawn = rng.choice([-1.0, 1.0], size=(sampled, n))
    # The identity pattern keeps a sampled p-value valid (never 0).
    return np.vstack([np.ones((1, n)), drawn]), False


def sign_flip(differences: Sequence[float], *, null: float = 0.0, seed: int = 0) -> SignFlip:
    """Exact (or, past EXACT_LIMIT clusters, sampled) sign-flip test on per-cluster values."""
    values = np.asarray([float(d) for d in differences if not math.isnan(float(d))])
    n = len(values)
    if n == 0:
        return SignFlip(0, math.nan, math.nan, math.nan, math.nan, True)
    greater, less, two = sign_flip_p(values[None, :] - null, seed=seed)
    _, exact = _signs(n, seed)
    return SignFlip(
        n, float(values.mean()), float(greater[0]), float(less[0]), float(two[0]), exact
    )


def sign_flip_p(values: np.ndarray, *, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The one-sided (greater, less) and two-sided p of the sign-flip test of mean 0, for each
    row of a (datasets × n) array at once: the simulations in the tests and the MDE use the
    very function the verdicts use."""
    x = np.atleast_2d(np.asarray(values, dtype=float))
    signs, _ = _signs(x.shape[1], seed)
    # Rows a few at a time: a datasets × patterns table of sums at 2^16 patterns was 2.4 GB for
    # the report's simulations at 16 clusters (docs/scaling.md); each row's p is its own.
    step = max(1, SUMS_AT_ONCE // len(signs))
    parts = [_p_rows(x[k : k + step], signs) for k in range(0, len(x), step)]
    greater, less, two = (np.concatenate(ps) for ps in zip(*parts, strict=True))
    return greater, less, two


def _p_rows(x: np.ndarray, signs: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    sums = x @ signs.T  # datasets × patterns
    observed = x.sum(axis=1, keepdims=True)
    scale = _TIE * np.maximum(1.0, np.abs(x).sum(axis=1, keepdims=True))
    greater = np.mean(sums >= observed - scale, axis=1)
    less = np.mean(sums <= observed + scale, axis=1)
    two = np.minimum(1.0, np.mean(np.abs(sums) >= np.abs(observed) - scale, axis=1))
    return greater, less, two


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


def verdict_label(verdict: Verdict, cluster_word: str, needed: int = 0) -> str:
    """A verdict as a report says it: "too few" names the kind's clusters and, where known, how
    many a verdict needs ("too few diarists (needs 8)", "too few role cards")."""
    if verdict != "too few":
        return verdict
    return f"too few {cluster_word}" + (f" (needs {needed})" if needed else "")


def sign_flip_bounds(
    values: np.ndarray,
    *,
    alpha: float = ALPHA,
    seed: int = 0,
    patterns: tuple[int, int] = (EXACT_LIMIT, SAMPLED_PATTERNS),
) -> tuple[np.ndarray, np.ndarray]:
    """The sign-flip test inverted, equal-tailed, for each row of a (datasets × n) array: the
    nulls neither one-sided test rejects at alpha/2.

    Flipping the signs of a set S of the centred values lowers their sum by 2·Σ_S(x − μ), so
    the one-sided p of null μ is (1 + #{S: mean of x over S ≤ μ}) / 2ⁿ. The bounds are
    therefore order statistics of the 2ⁿ − 1 subset means (Hartigan 1969): the k-th smallest
    and k-th largest, k = ⌈2ⁿ·alpha/2 − 1⌉. Under symmetric errors the true mean falls in each
    of the 2ⁿ gaps between them with equal probability, so coverage is 1 − 2k/2ⁿ ≥ 1 − alpha
    (95.3% at 8 clusters) — what the tests check by simulation. `patterns` (the most clusters
    enumerated, the patterns sampled beyond) lets a simulation trade exactness for speed."""
    x = np.atleast_2d(np.asarray(values, dtype=float))
    rows, n = x.shape
    if n < 2:
        return np.full(rows, np.nan), np.full(rows, np.nan)
    k = _order(n, alpha, seed, patterns)
    if k < 1:
        return np.full(rows, -np.inf), np.full(rows, np.inf)
    lows, highs = [], []
    for means in _subset_means(x, n, seed, patterns):
        lows.append(np.partition(means, k - 1, axis=1)[:, k - 1])
        means *= -1
        highs.append(-np.partition(means, k - 1, axis=1)[:, k - 1])
    return np.concatenate(lows), np.concatenate(highs)


def sign_flip_low_above_zero(
    values: np.ndarray,
    *,
    alpha: float = ALPHA,
    seed: int = 0,
    patterns: tuple[int, int] = (EXACT_LIMIT, SAMPLED_PATTERNS),
) -> np.ndarray:
    """For each row: whether sign_flip_bounds' lower bound lies above 0 — all a simulated
    verdict needs to know, found without finding the bound. The k-th smallest subset mean is
    above 0 exactly when fewer than k subset means are at or below 0: a count over the same
    means, where the bound takes a partition of them (at 16 clusters most of a report's time
    went to those partitions; docs/scaling.md)."""
    x = np.atleast_2d(np.asarray(values, dtype=float))
    rows, n = x.shape
    if n < 2:
        return np.zeros(rows, dtype=bool)
    k = _order(n, alpha, seed, patterns)
    if k < 1:
        return np.zeros(rows, dtype=bool)
    return np.concatenate(
        [(means <= 0).sum(axis=1) < k for means in _subset_means(x, n, seed, patterns)]
    )


def _order(n: int, alpha: float, seed: int, patterns: tuple[int, int]) -> int:
    """Which order statistic of the subset means is the bound (below 1: no bound at alpha)."""
    signs, _ = _signs(n, seed, *patterns)
    return math.ceil(len(signs) * alpha / 2 - 1 - 1e-9)


def _subset_means(
    x: np.ndarray, n: int, seed: int, patterns: tuple[int, int]
) -> Iterator[np.ndarray]:
    """Each row's mean over every subset the sign patterns flip, a block of rows at a time
    (each row's are its own): at 2^16 patterns a whole block's datasets × subsets table and its
    partitions took the report to 2.4 GB at 16 clusters."""
    signs, _ = _signs(n, seed, *patterns)
    flipped = signs < 0
    sizes = flipped.sum(axis=1)
    subsets = flipped[sizes > 0].astype(float)
    step = max(1, SUMS_AT_ONCE // len(subsets))
    for start in range(0, len(x), step):
        yield (x[start : start + step] @ subsets.T) / sizes[sizes > 0]  # datasets × subsets


def sign_flip_interval(
    differences: Sequence[float], *, alpha: float = ALPHA, seed: int = 0
) -> tuple[float, float]:
    """The equal-tailed sign-flip interval of one set of per-cluster values (NaN left out)."""
    values = [float(d) for d in differences if not math.isnan(float(d))]
    if len(values) < 2:
        return (math.nan, math.nan)
    low, high = sign_flip_bounds(np.asarray(values), alpha=alpha, seed=seed)
    return (float(low[0]), float(high[0]))


def minimum_detectable_effect(
    sd: float, n: int, *, alpha: float = ALPHA, power: float = 0.8
) -> float:
    """The t formula's smallest true mean difference a two-sided test at `alpha` finds with
    `power`, for `n` clusters whose values have standard deviation `sd`. Kept for comparison
    only: the sign-flip test needs more at small n (1.92 SD, not 1.60, at n = 8 and 0.05/6),
    and what reports print is rules.mde, for the test actually used."""
    if n < 2 or math.isnan(sd):
        return math.nan
    df = n - 1
    from scipy import stats  # here: scipy costs half a second at start-up

    return float((stats.t.ppf(1 - alpha / 2, df) + stats.t.ppf(power, df)) * sd / math.sqrt(n))
