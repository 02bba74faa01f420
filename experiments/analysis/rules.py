"""Decision rules as preregistered data, and the minimum detectable effect of the test a rule
actually uses.

A design's [analysis] names its rule; the report prints the other one beside it, labelled as a
sensitivity. Both read the same exact sign-flip test on per-cluster values
(experiments/analysis/verdicts.py):

  "intervals": every listed judge's 95% interval excludes zero in the stated direction — the
               rule the friends method page states. The interval is the equal-tailed sign-flip
               inversion, unadjusted for the number of hypotheses, as written.
  "holm":      sign-flip, Holm per judge — the lab's rule: the two-sided p, Holm-adjusted
               across the hypotheses naming the judge, below 0.05.

Because the sign-flip distribution is symmetric, the two-sided p is twice the one-sided one,
so each rule supports a hypothesis exactly when the one-sided p in the predicted direction is
below a level γ: alpha/2 for "intervals", alpha/(2m) at Holm's first step for "holm". That p
is (1 + #{subsets S whose mean ≤ 0}) / 2ⁿ (the subset-mean form in verdicts.py), so the
smallest attainable p is 1/2ⁿ and a design whose γ is not above it can never support anything.
The power at a true effect δ (in SD units, normal data) is P(δ > −L(Z)), L(Z) the k-th smallest
subset mean of standard normal noise: the MDE is a quantile of −L(Z) over seeded draws."""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import lru_cache
from typing import Literal

import numpy as np
from pydantic import Field

from diarylab.experiments.analysis.verdicts import (
    ALPHA,
    EXACT_LIMIT,
    SAMPLED_PATTERNS,
    sign_flip_bounds,
    sign_flip_low_above_zero,
)
from diarylab.experiments.engine.design import AnalysisSettings
from diarylab.foundation.datafiles import NonEmpty

Rule = Literal["intervals", "holm"]
RULES: tuple[Rule, ...] = ("intervals", "holm")
RULE_NAMES: dict[Rule, str] = {
    "intervals": "every listed judge's 95% interval excludes zero in the stated direction",
    "holm": "sign-flip, Holm per judge",
}
POWER = 0.8
# Seeded normal draws the MDE is a quantile over (its Monte Carlo error is under 1% at 8
# clusters); fewer where each draw has many subset means.
MDE_DRAWS = 20_000
MDE_DRAWS_LARGE = 3000
MDE_SEED = 20261202
# Past 12 clusters the MDE's simulation samples sign patterns (the test itself enumerates up
# to EXACT_LIMIT): the MDE moves by less than its Monte Carlo error, at a fraction of the time.
MDE_EXACT_LIMIT = 12
MDE_SAMPLED = 4096
_BLOCK = 256  # draws per block (memory: block × patterns)


def other_rule(rule: Rule) -> Rule:
    """The rule the report prints beside the design's as a sensitivity."""
    return "holm" if rule == "intervals" else "intervals"


def one_sided_level(rule: Rule, hypotheses: int, alpha: float = ALPHA) -> float:
    """γ: the one-sided p in the predicted direction must be below it for support (at Holm's
    first step, the most lenient, for "holm")."""
    return alpha / 2 if rule == "intervals" else alpha / (2 * max(1, hypotheses))


def patterns(n: int) -> int:
    """Sign patterns the test uses at n clusters (all 2ⁿ, or the identity + the sampled ones)."""
    return 2**n if n <= EXACT_LIMIT else SAMPLED_PATTERNS + 1


def smallest_p(n: int) -> float:
    """The smallest one-sided sign-flip p at n clusters (all values on one side)."""
    return 1.0 / patterns(n)


def can_support(rule: Rule, n: int, hypotheses: int, alpha: float = ALPHA) -> bool:
    """Whether any data at n clusters could support a hypothesis under the rule."""
    return n >= 2 and smallest_p(n) < one_sided_level(rule, hypotheses, alpha)


def fewest_clusters(rule: Rule, hypotheses: int, alpha: float = ALPHA) -> int:
    """The fewest clusters at which the rule can support anything."""
    n = 2
    while not can_support(rule, n, hypotheses, alpha):
        n += 1
    return n


def most_hypotheses(n: int, alpha: float = ALPHA) -> int:
    """The most hypotheses per judge Holm's first step can support at n clusters."""
    return max(0, math.ceil(alpha / (2 * smallest_p(n))) - 1)


# The correlation between two judges' per-cluster contrasts assumed where none was measured (a
# pilot measures it): lower correlations need larger effects, since every judge must agree.
DEFAULT_JUDGE_CORRELATION = 0.5


def judge_noise(
    rng: np.random.Generator, draws: int, n: int, judges: int, correlation: float
) -> list[np.ndarray]:
    """Standard normal per-cluster noise for each judge, every pair correlated `correlation`
    (a shared part plus each judge's own). One judge gets the shared draw itself, so the
    one-judge MDE is the same number whatever the correlation."""
    shared = rng.normal(size=(draws, n))
    if judges == 1:
        return [shared]
    rho = min(1.0, max(0.0, correlation))
    return [
        math.sqrt(rho) * shared + math.sqrt(1 - rho) * rng.normal(size=(draws, n))
        for _ in range(judges)
    ]


@lru_cache(maxsize=256)
def mde_sd(
    rule: Rule,
    n: int,
    hypotheses: int,
    alpha: float = ALPHA,
    power: float = POWER,
    judges: int = 1,
    correlation: float = DEFAULT_JUDGE_CORRELATION,
) -> float:
    """The true mean difference, in SDs of the per-cluster values (normal data), that the rule
    supports with `power` at n clusters, as the verdict is reached: every one of `judges`
    judges (their per-cluster values correlated `correlation`) must support it. inf where
    nothing can be supported. Seeded: the same arguments give the same number."""
    if n < 2:
        return math.nan
    if not can_support(rule, n, hypotheses, alpha):
        return math.inf
    gamma = one_sided_level(rule, hypotheses, alpha)
    # Enough sampled patterns that the level stays attainable (at least 50 below it).
    sampled = max(MDE_SAMPLED, math.ceil(50 / gamma))
    draws = MDE_DRAWS if n <= 8 else MDE_DRAWS_LARGE
    noises = judge_noise(np.random.default_rng(MDE_SEED + n), draws, n, max(1, judges), correlation)
    # A judge supports at effect δ when δ > −L (L its lower bound on the noise alone); the
    # verdict needs the largest of the judges' −L.
    needed = np.max(
        [
            np.concatenate(
                [
                    -sign_flip_bounds(
                        noise[i : i + _BLOCK], alpha=2 * gamma, patterns=(MDE_EXACT_LIMIT, sampled)
                    )[0]
                    for i in range(0, draws, _BLOCK)
                ]
            )
            for noise in noises
        ],
        axis=0,
    )
    return float(np.quantile(needed, power))


def rounded_correlation(correlation: float) -> float:
    """A measured correlation as the MDE uses it: in [0, 1], to 0.05 (a finer figure from a
    handful of clusters would be false precision, and each distinct value is a simulation)."""
    if math.isnan(correlation):
        return DEFAULT_JUDGE_CORRELATION
    return round(min(1.0, max(0.0, correlation)) * 20) / 20


def mde(
    sd: float,
    rule: Rule,
    n: int,
    hypotheses: int,
    alpha: float = ALPHA,
    power: float = POWER,
    judges: int = 1,
    correlation: float = DEFAULT_JUDGE_CORRELATION,
) -> float:
    """The MDE in the units of the values: `sd` × the rule's MDE in SDs."""
    if math.isnan(sd) or n < 2:
        return math.nan
    in_sds = mde_sd(rule, n, hypotheses, alpha, power, judges, rounded_correlation(correlation))
    return in_sds if math.isinf(in_sds) else sd * in_sds


def supports(rule: Rule, values: np.ndarray, hypotheses: int, alpha: float = ALPHA) -> np.ndarray:
    """For each row of (datasets × n) values: would the rule support "greater" from it (as the
    first of `hypotheses` under Holm)? The simulations of power and error rate use this."""
    gamma = one_sided_level(rule, hypotheses, alpha)
    return sign_flip_low_above_zero(values, alpha=2 * gamma)


def needed_clusters(rule: Rule, min_clusters: int, hypotheses: int, alpha: float = ALPHA) -> int:
    """The clusters a verdict needs: the design's minimum, raised to the fewest at which the
    rule's test can reach its level for a family of `hypotheses` (below that every verdict
    would read "inconclusive" whatever the data: it is "too few" instead, with this count).
    For "holm" this is the need at Holm's first step; holm_step_needs gives each step's."""
    return max(min_clusters, fewest_clusters(rule, max(1, hypotheses), alpha))


def holm_step_needs(
    p_values: Sequence[float],
    clusters: Sequence[int],
    min_clusters: int,
    alpha: float = ALPHA,
) -> tuple[int, ...]:
    """For each hypothesis of one judge's family (two-sided p and cluster count, in input
    order; NaN p: untested), the clusters a verdict on it needs under Holm. The hypothesis
    ranked j-th (0-based, smallest p first, ties in input order as verdicts.holm ranks them) of
    the m tested is judged at alpha/(m − j): it needs the clusters at which the sign-flip test
    can reach that level. Holm stops at the first step it cannot pass, so once a step's
    hypothesis has fewer clusters than its level needs, every later one needs that step's
    count too (no data could carry the procedure past it). A hypothesis below its need cannot
    be rejected, so "too few" and a Holm rejection never meet on one row. Untested ones get
    the first step's need."""
    tested = sorted((p, i) for i, p in enumerate(p_values) if not math.isnan(p))
    m = len(tested)
    needs = [needed_clusters("holm", min_clusters, max(1, m), alpha)] * len(p_values)
    blocked_at = 0
    for rank, (_, i) in enumerate(tested):
        own = needed_clusters("holm", min_clusters, m - rank, alpha)
        needs[i] = max(own, blocked_at)
        if not blocked_at and clusters[i] < own:
            blocked_at = own
    return tuple(needs)


def judge_correlation(series: Sequence[tuple[float, ...]]) -> float:
    """The mean pairwise Pearson correlation between judges' per-cluster values (aligned by
    cluster, pairs with both present); NaN with one judge or too few shared clusters."""
    found = []
    for i in range(len(series)):
        for j in range(i + 1, len(series)):
            a, b = np.asarray(series[i], dtype=float), np.asarray(series[j], dtype=float)
            if a.shape != b.shape:
                continue
            keep = np.isfinite(a) & np.isfinite(b)
            if keep.sum() >= 3 and np.std(a[keep]) > 0 and np.std(b[keep]) > 0:
                found.append(float(np.corrcoef(a[keep], b[keep])[0, 1]))
    return float(np.mean(found)) if found else math.nan


class TestedAnalysis(AnalysisSettings):
    """The [analysis] settings of a kind that tests preregistered hypotheses."""

    decision_rule: Rule = Field(
        "holm",
        description='how a hypothesis is decided: "intervals" (every listed judge\'s 95% '
        'sign-flip interval excludes zero in the stated direction, unadjusted) or "holm" '
        "(sign-flip, Holm per judge: the two-sided p Holm-adjusted across the judge's "
        "hypotheses below 0.05); the report prints the other beside it as a sensitivity",
    )
    interval: Literal["t", "bca", "percentile"] = Field(
        "t",
        description='the interval of the exploratory tables: "t" (jackknife t over clusters, '
        "covers 95% at 8 clusters in the tests' simulations), or the cluster bootstrap's "
        '"bca" or "percentile" (about 85–89% at 8 clusters); hypotheses always show the '
        "sign-flip interval their test gives",
    )
    no_verdicts: NonEmpty | None = Field(
        None,
        description="why this design runs with fewer clusters than its minimum (a demo, a "
        "smoke run): its hypotheses then read 'too few' by design. Without it, such a design "
        "is refused, as it could never answer its own question",
    )
