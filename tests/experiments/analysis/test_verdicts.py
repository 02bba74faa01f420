"""The verdict test holds its error rate at the lab's sample sizes; Holm and the verdict rules."""

from __future__ import annotations

import math

import numpy as np
import pytest

from diarylab.experiments.analysis.verdicts import (
    decide,
    holm,
    minimum_detectable_effect,
    overall,
    sign_flip,
    sign_flip_interval,
    sign_flip_p,
)


def test_sign_flip_exact_p_on_a_hand_counted_case() -> None:
    # [1, 2, 3]: 8 sign patterns, sums 6,4,2,0,0,-2,-4,-6; only +++ reaches 6.
    test = sign_flip([1.0, 2.0, 3.0])
    assert test.exact and test.n == 3
    assert test.p_greater == pytest.approx(1 / 8)
    assert test.p_less == pytest.approx(1.0)
    assert test.p_two_sided == pytest.approx(2 / 8)


def test_sign_flip_counts_ties_as_extreme() -> None:
    # [1, 1]: sums 2, 0, 0, -2 → P(sum >= 2) = 1/4.
    assert sign_flip([1.0, 1.0]).p_greater == pytest.approx(1 / 4)


def test_sign_flip_sampled_past_the_exact_limit_is_seeded_and_sane() -> None:
    rng = np.random.default_rng(3)
    values = list(rng.normal(0.0, 1.0, 30))
    first, again = sign_flip(values, seed=5), sign_flip(values, seed=5)
    assert not first.exact and first == again
    assert 0.0 < first.p_two_sided <= 1.0


def _coverage(n: int, draws: int, noise: str) -> float:
    """Share of simulated studies whose test at the true effect does not reject (= coverage),
    all studies in one call of the function sign_flip itself uses."""
    rng = np.random.default_rng(20261201 + n)
    effect = 0.6
    if noise == "normal":
        values = effect + rng.normal(0.0, 1.0, (draws, n))
    else:  # heavy-tailed, still symmetric
        values = effect + rng.standard_t(3, (draws, n))
    _, _, two = sign_flip_p(values - effect)
    return float(np.mean(two >= 0.05))


@pytest.mark.parametrize("noise", ["normal", "t3"])
def test_planted_effect_coverage_at_8_diarists_is_within_93_to_97_percent(noise: str) -> None:
    assert 0.93 <= _coverage(8, 3000, noise) <= 0.97


def test_planted_effect_coverage_at_30_diarists_is_within_93_to_97_percent() -> None:
    assert 0.93 <= _coverage(30, 1500, "normal") <= 0.97


def test_the_matrix_form_is_the_one_dataset_test() -> None:
    rng = np.random.default_rng(8)
    values = rng.normal(0.3, 1.0, (5, 8))
    greater, less, two = sign_flip_p(values)
    for row, g, lo, t in zip(values, greater, less, two, strict=True):
        test = sign_flip(list(row))
        assert (test.p_greater, test.p_less, test.p_two_sided) == (g, lo, t)
        # Symmetric null distribution: the two-sided p is twice the smaller one-sided one.
        assert t == pytest.approx(min(1.0, 2 * min(g, lo)))


def test_the_interval_is_the_set_of_nulls_neither_one_sided_test_rejects() -> None:
    values = [0.4, 1.1, -0.2, 0.9, 1.6, 0.3, 0.8, 1.2]
    low, high = sign_flip_interval(values)
    assert low < np.mean(values) < high
    assert sign_flip(values, null=low + 1e-6).p_greater >= 0.025
    assert sign_flip(values, null=low - 1e-6).p_greater < 0.025
    assert sign_flip(values, null=high - 1e-6).p_less >= 0.025
    assert sign_flip(values, null=high + 1e-6).p_less < 0.025


def test_two_and_three_diarists_give_too_few_diarists() -> None:
    for values in ([1.0, 2.0], [0.5, 3.0, 1.0]):
        test = sign_flip(values)
        assert decide(test, test.p_two_sided, "greater") == "too few"


def test_decide_names_supported_contradicted_and_inconclusive() -> None:
    up = sign_flip([1.0, 2.0, 1.5, 0.7, 1.1, 0.9, 1.3, 2.2])  # all positive: p = 2/256
    assert up.p_two_sided == pytest.approx(2 / 256)
    assert decide(up, up.p_two_sided, "greater") == "supported"
    assert decide(up, up.p_two_sided, "less") == "contradicted"
    assert decide(up, 0.2, "greater") == "inconclusive"
    assert decide(up, up.p_two_sided, "greater", min_clusters=9) == "too few"


def test_holm_on_a_hand_computed_case() -> None:
    # sorted 0.01, 0.02, 0.03, 0.04 → ×4, ×3, ×2, ×1 = 0.04, 0.06, 0.06 (monotone), 0.06
    adjusted = holm([0.03, 0.01, 0.04, 0.02])
    assert adjusted == pytest.approx((0.06, 0.04, 0.06, 0.06))
    assert holm([0.5, 0.9]) == pytest.approx((1.0, 1.0))
    nan_kept = holm([math.nan, 0.01])
    assert math.isnan(nan_kept[0]) and nan_kept[1] == pytest.approx(0.01)


def test_overall_needs_every_judge_to_agree() -> None:
    assert overall(["supported", "supported"]) == "supported"
    assert overall(["contradicted", "contradicted"]) == "contradicted"
    assert overall(["supported", "inconclusive"]) == "inconclusive"
    assert overall(["supported", "contradicted"]) == "inconclusive"
    assert overall(["supported", "too few"]) == "too few"


def test_minimum_detectable_effect_shrinks_with_n_and_grows_with_stricter_alpha() -> None:
    at8, at32 = minimum_detectable_effect(10.0, 8), minimum_detectable_effect(10.0, 32)
    assert at32 < at8
    assert minimum_detectable_effect(10.0, 8, alpha=0.01) > at8
    # Large-n limit: (1.96 + 0.84) · sd / √n
    assert minimum_detectable_effect(1.0, 10_000) == pytest.approx(2.80 / 100, rel=0.01)


def test_many_rows_a_few_at_a_time_give_what_all_at_once_gives(monkeypatch):
    """The bounds and p-values are worked out a few rows at a time (memory: 2^16 patterns at
    16 clusters); each row's figures are its own, so the chunks change nothing but the last
    bits of a mean (a one-row product may round apart from a many-row one)."""
    import numpy as np

    from diarylab.experiments.analysis import verdicts

    x = np.random.default_rng(5).normal(0.3, 1.0, size=(300, 16))
    monkeypatch.setattr(verdicts, "SUMS_AT_ONCE", 10**12)
    whole = (*verdicts.sign_flip_bounds(x), *verdicts.sign_flip_p(x))
    monkeypatch.setattr(verdicts, "SUMS_AT_ONCE", 70_000)  # one row at a time at 2^16
    chunked = (*verdicts.sign_flip_bounds(x), *verdicts.sign_flip_p(x))
    for a, b in zip(whole, chunked, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("n", [1, 2, 5, 8, 16, 21])
@pytest.mark.parametrize("alpha", [0.05, 0.01, 0.3, 1e-6])
def test_the_simulations_count_decides_as_the_lower_bound_does(n, alpha):
    """The simulated verdicts ask only whether the lower bound lies above 0, and find that by
    counting subset means at or below 0: the same decision as the bound itself on every row,
    exact (16 clusters) and sampled (21), with the ties whole-number values make and the rows a
    level too strict to bound (1e-6)."""
    from diarylab.experiments.analysis.verdicts import (
        sign_flip_bounds,
        sign_flip_low_above_zero,
    )

    rng = np.random.default_rng(n)
    smooth = rng.normal(0.6, 1.0, size=(120, n))
    tied = rng.integers(-1, 4, size=(120, n)).astype(float)
    for x in (smooth, tied, np.zeros((3, n))):
        expected = sign_flip_bounds(x, alpha=alpha)[0] > 0
        got = sign_flip_low_above_zero(x, alpha=alpha)
        assert got.dtype == bool and got.shape == (len(x),)
        np.testing.assert_array_equal(got, expected)
    if n >= 8 and alpha >= 0.05:
        # The comparison is not empty: both answers occur among these rows.
        assert 0 < sign_flip_low_above_zero(smooth, alpha=alpha).sum() < len(smooth)
