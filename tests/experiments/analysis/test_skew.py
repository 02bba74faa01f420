"""Skewed per-cluster values at 8 clusters: why no row is flagged (a sample-skewness flag marks
the rows where the t interval already covers), and Hall's interval, carried on every row, is at
least as close to 95% as the t interval on every data shape tried (seeded)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from diarylab.experiments.analysis.skew import hall_interval, sample_skewness, skew_check

N = 8
DATASETS = 6000


def _t_covers(x: np.ndarray, mean: float) -> np.ndarray:
    half = stats.t.ppf(0.975, N - 1) * x.std(axis=1, ddof=1) / np.sqrt(N)
    return np.abs(x.mean(axis=1) - mean) <= half


def _hall_covers(x: np.ndarray, mean: float) -> np.ndarray:
    bounds = np.array([hall_interval(row) for row in x])
    return (bounds[:, 0] <= mean) & (mean <= bounds[:, 1])


def _shape(name: str, rng: np.random.Generator) -> tuple[np.ndarray, float]:
    if name == "normal":
        return rng.normal(size=(DATASETS, N)), 0.0
    if name == "t3":
        return rng.standard_t(3, size=(DATASETS, N)), 0.0
    if name == "chi2_4":
        return rng.chisquare(4, size=(DATASETS, N)), 4.0
    return rng.lognormal(size=(DATASETS, N)), math.exp(0.5)


@pytest.fixture(scope="module")
def shapes() -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Per data shape: (t covers, Hall covers, |sample skewness|) over the same datasets."""
    rng = np.random.default_rng(52)
    found = {}
    for name in ("normal", "t3", "chi2_4", "lognormal"):
        x, mean = _shape(name, rng)
        found[name] = (
            _t_covers(x, mean),
            _hall_covers(x, mean),
            np.abs(stats.skew(x, axis=1, bias=False)),
        )
    return found


def test_a_sample_skewness_flag_would_mark_the_rows_where_t_already_covers(shapes):
    """Why there is no flag: on χ²₄ data the t interval covers about 0.95 on the samples whose
    skewness is high and about 0.90 on the rest; Hall's interval on the flagged rows only
    would raise coverage where none was lost."""
    t_covers, _, skew = shapes["chi2_4"]
    flagged = skew >= 0.9  # the level the old flag used at 8 clusters
    assert t_covers[flagged].mean() >= 0.94
    assert t_covers[~flagged].mean() <= 0.91


@pytest.mark.parametrize(
    ("shape", "t_range", "hall_range"),
    [
        ("normal", (0.94, 0.96), (0.94, 0.96)),
        ("t3", (0.95, 0.975), (0.93, 0.955)),
        ("chi2_4", (0.90, 0.935), (0.93, 0.955)),
        ("lognormal", (0.81, 0.86), (0.88, 0.92)),
    ],
)
def test_hall_on_every_row_is_at_least_as_close_to_95_as_t(shapes, shape, t_range, hall_range):
    """The coverages skew.py and docs/statistics.md state, over all samples (every row carries
    Hall's interval, so no conditional figure is needed)."""
    t_covers, hall_covers, _ = shapes[shape]
    t, hall = t_covers.mean(), hall_covers.mean()
    assert t_range[0] <= t <= t_range[1] and hall_range[0] <= hall <= hall_range[1]
    assert abs(hall - 0.95) <= abs(t - 0.95) + 0.005


def test_a_rows_check_carries_its_skewness_and_hall_interval():
    skewed = np.array([0.1, 0.2, 0.1, 0.3, 0.2, 0.1, 0.4, 5.0])
    check = skew_check(skewed)
    assert check.skewness == pytest.approx(sample_skewness(skewed))
    assert check.robust_low < skewed.mean() < check.robust_high
    # The long right tail pulls Hall's interval up, past the t interval's upper end.
    half = stats.t.ppf(0.975, N - 1) * skewed.std(ddof=1) / np.sqrt(N)
    assert check.robust_high > skewed.mean() + half
