"""The verdict as a design reaches it, simulated on normal data: a family of m hypotheses, each
read by every judge (the judges' per-cluster values correlated), each judge deciding by the
design's rule (Holm across the judge's family, or the unadjusted interval), the overall verdict
needing every judge to agree. The power a study is promised and the family-wise error of a
preregistered rule are both read off this simulation, so they describe the rule as it runs,
not one judge's test on its own (rules.mde_sd, the printed MDE, is checked against it in the
tests).

Hypotheses are simulated independent of one another (their contrasts share clusters in a real
study, so this is an assumption, stated wherever a figure from it is printed)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from diarylab.experiments.analysis.rules import Rule, can_support, judge_noise
from diarylab.experiments.analysis.verdicts import (
    ALPHA,
    sign_flip_low_above_zero,
    sign_flip_p,
)

_BLOCK = 512


def holm_rows(p: np.ndarray) -> np.ndarray:
    """Holm–Bonferroni adjusted p along the last axis of an array (what verdicts.holm does to
    one family, for many families at once)."""
    m = p.shape[-1]
    order = np.argsort(p, axis=-1)
    ranked = np.take_along_axis(p, order, axis=-1) * (m - np.arange(m))
    adjusted_sorted = np.minimum(1.0, np.maximum.accumulate(ranked, axis=-1))
    adjusted = np.empty_like(p)
    np.put_along_axis(adjusted, order, adjusted_sorted, axis=-1)
    return adjusted


def _judge_findings(rule: Rule, values: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """values: (draws, m, n) for one judge → (draws, m) supported and (draws, m) contradicted
    ("greater" predicted): the judge's verdict on the predicted side and on the other."""
    draws, m, n = values.shape
    flat = values.reshape(draws * m, n)
    if rule == "intervals":
        sides = [
            np.concatenate(
                [
                    sign_flip_low_above_zero(sign * flat[i : i + _BLOCK], alpha=alpha)
                    for i in range(0, len(flat), _BLOCK)
                ]
            ).reshape(draws, m)
            for sign in (1.0, -1.0)  # the interval above 0; below 0 (its mirror above)
        ]
        return sides[0], sides[1]
    two = np.concatenate(
        [sign_flip_p(flat[i : i + _BLOCK])[2] for i in range(0, len(flat), _BLOCK)]
    ).reshape(draws, m)
    rejected = holm_rows(two) < alpha
    mean = values.mean(axis=2)
    return rejected & (mean > 0), rejected & (mean < 0)


def simulate_findings(
    rule: Rule,
    n: int,
    effects: tuple[float, ...],
    *,
    judges: int = 2,
    correlation: float = 0.5,
    draws: int = 4000,
    seed: int = 0,
    alpha: float = ALPHA,
) -> tuple[np.ndarray, np.ndarray]:
    """(draws, m) booleans each: whether each hypothesis (true effect `effects[i]` SDs,
    "greater" predicted) comes out supported overall, and whether it comes out contradicted
    overall (every judge agreeing on the side)."""
    rng = np.random.default_rng(seed)
    m = len(effects)
    per_judge = [
        np.stack(noise, axis=1)
        for noise in zip(
            *(judge_noise(rng, draws, n, judges, correlation) for _ in range(m)), strict=True
        )
    ]  # judges × (draws, m, n)
    shift = np.asarray(effects, dtype=float)[None, :, None]
    supported = np.ones((draws, m), dtype=bool)
    contradicted = np.ones((draws, m), dtype=bool)
    for values in per_judge:
        up, down = _judge_findings(rule, values + shift, alpha)
        supported &= up
        contradicted &= down
    return supported, contradicted


def verdict_power(
    rule: Rule,
    n: int,
    hypotheses: int,
    effect: float,
    *,
    judges: int = 2,
    correlation: float = 0.5,
    draws: int = 4000,
    seed: int = 0,
) -> float:
    """P(the first hypothesis is supported) at `effect` SDs, the family's others null."""
    effects = (effect,) + (0.0,) * (hypotheses - 1)
    supported, _ = simulate_findings(
        rule, n, effects, judges=judges, correlation=correlation, draws=draws, seed=seed
    )
    return float(supported[:, 0].mean())


@dataclass(frozen=True)
class FamilyError:
    """The family-wise error of a rule as run, over `draws` simulated families of true nulls:
    P(at least one comes out supported), and P(at least one comes out supported or
    contradicted) — a contradicted true null is a false finding too."""

    supported: float
    either: float
    draws: int

    def noise(self, share: float) -> float:
        """The Monte Carlo standard error of a share estimated from these draws."""
        return math.sqrt(max(share * (1 - share), 1.0 / self.draws) / self.draws)


@lru_cache(maxsize=64)
def family_errors(
    rule: Rule,
    n: int,
    hypotheses: int,
    *,
    judges: int = 2,
    correlation: float = 0.5,
    draws: int = 4000,
    seed: int = 0,
) -> FamilyError:
    """Both family-wise errors of the rule as run, every judge agreeing, at the judges'
    correlation, from one set of simulated families. Seeded, so kept per argument set: a
    report process asks the same family for both rules and every table."""
    supported, contradicted = simulate_findings(
        rule,
        n,
        (0.0,) * hypotheses,
        judges=judges,
        correlation=correlation,
        draws=draws,
        seed=seed,
    )
    return FamilyError(
        float(supported.any(axis=1).mean()),
        float((supported | contradicted).any(axis=1).mean()),
        draws,
    )


def family_error(
    rule: Rule,
    n: int,
    hypotheses: int,
    *,
    judges: int = 2,
    correlation: float = 0.5,
    draws: int = 4000,
    seed: int = 0,
) -> float:
    """P(any of `hypotheses` true nulls comes out supported): the family-wise error of the rule
    as run counted on the predicted side only (family_errors counts both sides)."""
    return family_errors(
        rule, n, hypotheses, judges=judges, correlation=correlation, draws=draws, seed=seed
    ).supported


def report_draws(n: int) -> int:
    """Families simulated for a report's family-wise error: enough that its Monte Carlo error
    stays under 0.002 up to 10 clusters for errors up to 0.2 (40,000 draws: 0.0017 at 0.137);
    fewer past that, where each draw costs up to 2¹⁶ sign patterns; a report states the noise
    of any figure whose Monte Carlo SE reaches 0.002."""
    return 40_000 if n <= 10 else 8_000 if n <= 12 else 1_000


NOISE_STATED = 0.002


def _figure(found: FamilyError, share: float) -> str:
    noise = found.noise(share)
    return f"{share:.3f}" + (f" (± {noise:.3f} Monte Carlo SE)" if noise >= NOISE_STATED else "")


def family_error_text(
    rule: Rule,
    n: int,
    hypotheses: int,
    judges: int,
    correlation: float,
    cluster_word: str,
    *,
    measured: bool = True,
) -> str:
    """The family-wise error of the design's rule as run, beside the other rule's, as a report
    states it under its verdicts, counted both ways: true nulls coming out supported, and
    supported or contradicted (true nulls simulated independent; judges correlated as measured,
    or as assumed where they could not be). Nothing where the rule can decide nothing at n
    (the verdicts say "too few" instead)."""
    if hypotheses < 1 or not can_support(rule, n, hypotheses):
        return ""
    draws = report_draws(n)
    found = {
        r: family_errors(
            r, n, hypotheses, judges=judges, correlation=correlation, draws=draws, seed=n
        )
        for r in ("intervals", "holm")
    }
    other: Rule = "holm" if rule == "intervals" else "intervals"
    uncontrolled = (
        " The rule makes no adjustment for the number of hypotheses: it is run as "
        "preregistered, and this is its price."
        if rule == "intervals"
        else ""
    )
    who = (
        f"{judges} judges correlated ρ = {correlation:.2f} "
        f"({'as measured here' if measured else 'assumed: not measurable here'})"
        if judges > 1
        else "one judge"
    )
    plural = "hypotheses were" if hypotheses > 1 else "hypothesis were"
    mine, theirs = found[rule], found[other]
    return (
        f"Family-wise error of the preregistered rule as run ({rule}): if all {hypotheses} "
        f"{plural} false, P(at least one comes out supported) = {_figure(mine, mine.supported)}"
        f" and P(at least one comes out supported or contradicted, both false findings) = "
        f"{_figure(mine, mine.either)}, at {n} {cluster_word}, {who}, by {draws:,} seeded "
        f"simulated families with the hypotheses independent; under the sensitivity ({other}): "
        f"{_figure(theirs, theirs.supported)} and {_figure(theirs, theirs.either)}."
        f"{uncontrolled}\n"
    )
