"""The power a design is promised is the power of its verdict as run: two judges that must agree,
Holm across the family, the sign-flip test. Proved by simulating the verdict with the same
steps the report takes (per-judge p, Holm, sign, every judge agreeing) at the printed MDE; a
family that loses clusters below what its size needs says "too few", with the count."""

from __future__ import annotations

import math

import numpy as np
import pytest

from diarylab.experiments.analysis.hypotheses import ClusterValues, HypothesisHead, evaluate_family
from diarylab.experiments.analysis.hypothesis_table import results_table
from diarylab.experiments.analysis.rules import judge_correlation, mde_sd, needed_clusters
from diarylab.experiments.analysis.verdict_simulation import (
    family_error,
    family_errors,
    holm_rows,
    report_draws,
    verdict_power,
)
from diarylab.experiments.analysis.verdicts import holm


@pytest.mark.parametrize("rho", [0.5, 0.9])
@pytest.mark.parametrize(("rule", "m"), [("holm", 1), ("holm", 6), ("intervals", 6)])
def test_the_printed_mde_gives_80_percent_power_of_the_verdict(rule, m, rho):
    effect = mde_sd(rule, 8, m, judges=2, correlation=rho)
    power = verdict_power(rule, 8, m, effect, correlation=rho, draws=6000, seed=11)
    assert 0.78 <= power <= 0.82
    # One judge's MDE, the figure printed before, under-promises the verdict.
    alone = verdict_power(rule, 8, m, mde_sd(rule, 8, m), correlation=rho, draws=6000, seed=12)
    assert alone < 0.77


def test_lower_correlation_between_judges_needs_a_larger_effect():
    one = mde_sd("holm", 8, 6)
    assert one < mde_sd("holm", 8, 6, judges=2, correlation=0.9)
    assert mde_sd("holm", 8, 6, judges=2, correlation=0.9) < mde_sd(
        "holm", 8, 6, judges=2, correlation=0.5
    )
    assert mde_sd("holm", 8, 6, judges=2, correlation=1.0) == pytest.approx(one)


def test_vectorised_holm_is_holm():
    rng = np.random.default_rng(3)
    p = rng.uniform(size=(50, 6)) ** 3
    expected = np.array([holm(row.tolist()) for row in p])
    assert np.allclose(holm_rows(p), expected)


def test_the_family_error_of_each_rule_as_run():
    """Holm holds the family at 5% one-sided-supported; the unadjusted intervals rule with two
    correlated judges does not (the friends method page's rule, run as written)."""
    assert family_error("holm", 8, 6, correlation=0.9, draws=8000, seed=1) <= 0.03
    loose = family_error("intervals", 8, 6, correlation=0.9, draws=8000, seed=1)
    assert 0.04 <= loose <= 0.09


def _heads(count: int) -> list[HypothesisHead]:
    return [
        HypothesisHead(id=f"H{i}", says="x", direction="greater", judges=("a", "b"))
        for i in range(count)
    ]


def test_lost_clusters_below_what_the_family_needs_say_too_few_with_the_count():
    """Six hypotheses under Holm need 8 clusters (the smallest two-sided p at 7 is 2/128 >
    0.05/6): a 10-SD effect at 7 clusters is "too few (needs 8)", never "inconclusive"."""
    assert needed_clusters("holm", 6, 6) == 8 and needed_clusters("intervals", 6, 6) == 6
    heads = _heads(6)
    rng = np.random.default_rng(0)
    values = {(h.id, j): ClusterValues(tuple(10 + rng.normal(size=7))) for h in heads for j in "ab"}
    results = evaluate_family(heads, values, min_clusters=6, rule="holm")
    assert {r.overall for r in results} == {"too few"}
    assert {r.sensitivity for r in results} == {"supported"}  # intervals needs only 6
    table = results_table(results, clusters="diarists", cluster_word="diarists")
    assert set(table["overall"]) == {"too few diarists (needs 8)"}
    assert np.isfinite(table["mde"]).all() or math.isinf(table["mde"].iloc[0])
    at_8 = {(h.id, j): ClusterValues(tuple(10 + rng.normal(size=8))) for h in heads for j in "ab"}
    assert {r.overall for r in evaluate_family(heads, at_8, min_clusters=6)} == {"supported"}


def test_the_report_mde_uses_the_judges_measured_correlation():
    heads = _heads(1)
    rng = np.random.default_rng(5)
    shared = rng.normal(size=8)
    values = {
        ("H0", "a"): ClusterValues(tuple(shared + 0.3 * rng.normal(size=8))),
        ("H0", "b"): ClusterValues(tuple(shared + 0.3 * rng.normal(size=8))),
    }
    rho = judge_correlation([values[("H0", "a")].values, values[("H0", "b")].values])
    assert rho > 0.8
    [result] = evaluate_family(heads, values, min_clusters=6)
    for v in result.verdicts:
        assert v.judge_correlation == pytest.approx(round(rho * 20) / 20)
        assert v.mde == pytest.approx(
            v.sd * mde_sd("holm", 8, 1, judges=2, correlation=v.judge_correlation)
        )


def test_design_check_prints_the_verdict_mde_for_two_judges_and_its_assumed_correlation(capsys):
    from diarylab.experiments.cli import main

    assert main(["design", "check", "experiments/designs/friends.toml", "--offline"]) == 0
    out = capsys.readouterr().out
    line = next(ln for ln in out.splitlines() if "judge mistral-small-3.1: 6 hypotheses" in ln)
    two = mde_sd("intervals", 8, 6, judges=2, correlation=0.5)
    assert f"supported with 80% power at {two:.2f} SD" in line
    assert "all 2 judges agreeing at ρ = 0.50 between them, assumed" in line
    assert f"one judge alone: {mde_sd('intervals', 8, 6):.2f} SD" in line


def test_the_family_error_line_states_the_rule_as_run_and_the_other_beside_it():
    from diarylab.experiments.analysis.verdict_simulation import family_error_text

    text = family_error_text("intervals", 8, 6, 2, 0.9, "role cards")
    assert text.startswith("Family-wise error of the preregistered rule as run (intervals)")
    found = family_errors("intervals", 8, 6, correlation=0.9, draws=report_draws(8), seed=8)
    assert f"P(at least one comes out supported) = {found.supported:.3f} and" in text
    assert f"supported or contradicted, both false findings) = {found.either:.3f}, at 8" in text
    assert "role cards, 2 judges correlated ρ = 0.90 (as measured" in text
    assert "Monte Carlo" not in text  # 40,000 families: every figure's noise under 0.002
    assert "under the sensitivity (holm)" in text and "no adjustment" in text
    assert "assumed" in family_error_text("holm", 8, 6, 2, 0.5, "diarists", measured=False)
    assert family_error_text("holm", 2, 1, 1, 0.5, "diarists") == ""  # nothing decidable
    # Past 10 clusters fewer families are drawn, and a figure with noise over 0.002 says so.
    assert "Monte Carlo SE" in family_error_text("intervals", 11, 6, 2, 0.9, "diarists")


@pytest.mark.parametrize(("rule", "rho"), [("intervals", 0.9), ("holm", 0.5)])
def test_false_findings_are_counted_both_ways_as_the_report_reaches_them(rule, rho):
    """The printed errors against the report's own pipeline (evaluate_family on simulated null
    families, two correlated judges): a true null that comes out contradicted is a false
    finding too, so counting both sides roughly doubles the one-sided figure."""
    found = family_errors(rule, 8, 6, correlation=rho, draws=report_draws(8), seed=3)
    assert found.noise(found.either) < 0.002
    rng = np.random.default_rng(int(rho * 10))
    heads, families = _heads(6), 1000
    supported = either = 0
    for _ in range(families):
        shared = rng.normal(size=(6, 8))
        values = {
            (h.id, j): ClusterValues(
                tuple(np.sqrt(rho) * shared[i] + np.sqrt(1 - rho) * rng.normal(size=8))
            )
            for i, h in enumerate(heads)
            for j in "ab"
        }
        overall = {r.overall for r in evaluate_family(heads, values, min_clusters=6, rule=rule)}
        supported += "supported" in overall
        either += bool(overall & {"supported", "contradicted"})
    tolerance = 3.5 * np.sqrt(max(found.either, 0.01) / families)
    assert supported / families == pytest.approx(found.supported, abs=tolerance)
    assert either / families == pytest.approx(found.either, abs=tolerance)
    assert found.either > 1.6 * found.supported
    if rule == "intervals" and rho == 0.9:
        assert 0.125 <= found.either <= 0.15  # the review's 0.137; one-sided 0.071
