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


def _judge_supports(rule: Rule, values: np.ndarray, alpha: float) -> np.ndarray:
    """values: (draws, m, n) for one judge → (draws, m) supported ("greater" predicted)."""
    draws, m, n = values.shape
    flat = values.reshape(draws * m, n)
    if rule == "intervals":
        above = np.concatenate(
            [
                sign_flip_low_above_zero(flat[i : i + _BLOCK], alpha=alpha)
                for i in range(0, len(flat), _BLOCK)
            ]
        )
        return above.reshape(draws, m)
    two = np.concatenate(
        [sign_flip_p(flat[i : i + _BLOCK])[2] for i in range(0, len(flat), _BLOCK)]
    ).reshape(draws, m)
    up = values.mean(axis=2) > 0
    return (holm_rows(two) < alpha) & up


def simulate_verdicts(
    rule: Rule,
    n: int,
    effects: tuple[float, ...],
    *,
    judges: int = 2,
    correlation: float = 0.5,
    draws: int = 4000,
    seed: int = 0,
    alpha: float = ALPHA,
) -> np.ndarray:
    """(draws, m) booleans: whether each hypothesis (true effect `effects[i]` SDs, "greater"
    predicted) comes out supported overall, every judge agreeing."""
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
    for values in per_judge:
        supported &= _judge_supports(rule, values + shift, alpha)
    return supported


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
    found = simulate_verdicts(
        rule, n, effects, judges=judges, correlation=correlation, draws=draws, seed=seed
    )
    return float(found[:, 0].mean())


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
    as run, every judge agreeing, at the judges' correlation."""
    found = simulate_verdicts(
        rule,
        n,
        (0.0,) * hypotheses,
        judges=judges,
        correlation=correlation,
        draws=draws,
        seed=seed,
    )
    return float(found.any(axis=1).mean())


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
    states it under its verdicts (true nulls simulated independent; judges correlated as
    measured, or as assumed where they could not be). Nothing where the rule can decide
    nothing at n (the verdicts say "too few" instead)."""
    if hypotheses < 1 or not can_support(rule, n, hypotheses):
        return ""
    draws = 4000 if n <= 12 else 1000
    found = {
        r: family_error(
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
    return (
        f"Family-wise error of the preregistered rule as run ({rule}): if all {hypotheses} "
        f"{plural} false, P(at least one comes out supported) = {found[rule]:.3f} at {n} "
        f"{cluster_word}, {who}, by seeded simulation with the hypotheses independent; under "
        f"the sensitivity ({other}): {found[other]:.3f}.{uncontrolled}\n"
    )
