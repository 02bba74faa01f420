"""The cluster bootstrap: interval coverage on planted truths, resampling by diarist, BCa."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from diarylab.experiments.analysis.bootstrap import (
    cluster_bootstrap,
    mean_of,
    pearson_of,
    resampled,
)

# Percentile/BCa intervals undercover with few clusters (8 diarists gives ~88%, the t-vs-z gap);
# coverage tests use 30 clusters, where the nominal 95% is reached within simulation error.
CLUSTERS = 30
DATASETS = 300


def _per_entry(
    rng: np.random.Generator, truth: float, entries: int, slope_sd: float, noise_sd: float
):
    """Entry-level differences: truth + a diarist's own response + entry noise."""
    diarist = np.repeat(np.arange(CLUSTERS), entries)
    value = (
        truth + rng.normal(0, slope_sd, CLUSTERS)[diarist] + rng.normal(0, noise_sd, diarist.size)
    )
    return pd.DataFrame({"diarist": diarist, "entry_id": np.arange(diarist.size), "diff": value})


@pytest.mark.parametrize("method", ["bca", "percentile"])
def test_interval_covers_planted_effect(method):
    rng = np.random.default_rng(11)
    covered = 0
    for i in range(DATASETS):
        table = _per_entry(rng, truth=20.0, entries=1, slope_sd=6.0, noise_sd=3.0)
        iv = cluster_bootstrap(
            table, mean_of("diff"), resamples=400, seed=i, method=method, cluster="diarist"
        )
        covered += iv.low <= 20.0 <= iv.high
    assert 0.90 <= covered / DATASETS <= 0.98


def test_resampling_is_by_diarist_not_by_entry():
    """Strong diarist differences and many entries each: entries of one diarist are not
    independent. Resampling diarists keeps coverage; resampling entries (as if independent)
    gives intervals several times too narrow that miss the truth most of the time."""
    rng = np.random.default_rng(5)
    truth = -4.0
    covered = {"diarist": 0, "entry_id": 0}
    widths: dict[str, list[float]] = {"diarist": [], "entry_id": []}
    datasets = 200
    for i in range(datasets):
        table = _per_entry(rng, truth, entries=20, slope_sd=10.0, noise_sd=3.0)
        for cluster in covered:
            iv = cluster_bootstrap(
                table, mean_of("diff"), cluster=cluster, resamples=400, seed=i, method="percentile"
            )
            covered[cluster] += iv.low <= truth <= iv.high
            widths[cluster].append(iv.high - iv.low)
    assert 0.90 <= covered["diarist"] / datasets <= 0.98
    assert covered["entry_id"] / datasets < 0.5
    assert np.median(widths["diarist"]) > 3 * np.median(widths["entry_id"])


def test_bca_matches_scipy_when_every_row_is_its_own_cluster():
    """On i.i.d. skewed data, cluster = row reduces to the ordinary bootstrap: our BCa should
    agree with scipy's (different random draws, so up to Monte Carlo error)."""
    x = np.random.default_rng(3).exponential(10.0, 40)
    table = pd.DataFrame({"diarist": np.arange(40), "v": x})
    ours = cluster_bootstrap(
        table, mean_of("v"), resamples=20000, seed=1, method="bca", cluster="diarist"
    )
    ref = stats.bootstrap(
        (x,), np.mean, n_resamples=20000, method="BCa", rng=np.random.default_rng(2)
    ).confidence_interval
    assert ours.low == pytest.approx(ref.low, abs=0.25)
    assert ours.high == pytest.approx(ref.high, abs=0.25)
    # Skewed data: BCa moves the interval right of the percentile one.
    pct = cluster_bootstrap(
        table, mean_of("v"), resamples=20000, seed=1, method="percentile", cluster="diarist"
    )
    assert ours.high > pct.high


def test_same_seed_same_interval_and_estimate_is_plain_mean():
    table = _per_entry(np.random.default_rng(0), 1.0, entries=3, slope_sd=1.0, noise_sd=1.0)
    a = cluster_bootstrap(
        table, mean_of("diff"), resamples=500, seed=7, cluster="diarist", method="bca"
    )
    b = cluster_bootstrap(
        table, mean_of("diff"), resamples=500, seed=7, cluster="diarist", method="bca"
    )
    c = cluster_bootstrap(
        table, mean_of("diff"), resamples=500, seed=8, cluster="diarist", method="bca"
    )
    assert a == b and a != c
    assert a.estimate == pytest.approx(table["diff"].mean())
    assert (a.clusters, a.resamples, a.method) == (CLUSTERS, 500, "bca")


def test_weighted_statistics_equal_resampling_rows():
    """The weight representation is the same thing as physically repeating diarists' rows."""
    table = _per_entry(np.random.default_rng(1), 2.0, entries=3, slope_sd=2.0, noise_sd=1.0)
    table = table.assign(
        other=table["diff"] * 0.5 + np.random.default_rng(2).normal(size=len(table))
    )
    fast = cluster_bootstrap(table, mean_of("diff"), resamples=200, seed=4, cluster="diarist")
    slow = cluster_bootstrap(
        table, resampled(lambda t: t["diff"].mean()), resamples=200, seed=4, cluster="diarist"
    )
    assert (fast.low, fast.high) == pytest.approx((slow.low, slow.high))
    r = cluster_bootstrap(
        table, pearson_of("diff", "other"), resamples=200, seed=4, cluster="diarist"
    )
    assert r.estimate == pytest.approx(np.corrcoef(table["diff"], table["other"])[0, 1])
    r_slow = cluster_bootstrap(
        table,
        resampled(lambda t: float(np.corrcoef(t["diff"], t["other"])[0, 1])),
        resamples=200,
        seed=4,
        method="percentile",
        cluster="diarist",
    )
    r_fast = cluster_bootstrap(
        table,
        pearson_of("diff", "other"),
        resamples=200,
        seed=4,
        method="percentile",
        cluster="diarist",
    )
    assert (r_fast.low, r_fast.high) == pytest.approx((r_slow.low, r_slow.high))


def test_missing_values_are_skipped_and_one_cluster_has_no_interval():
    table = pd.DataFrame({"diarist": ["a", "a", "b", "c"], "v": [1.0, np.nan, 3.0, 5.0]})
    iv = cluster_bootstrap(table, mean_of("v"), resamples=300, seed=0, cluster="diarist")
    assert iv.estimate == pytest.approx(3.0)
    assert iv.low <= 3.0 <= iv.high
    one = cluster_bootstrap(
        table[table["diarist"] == "b"], mean_of("v"), resamples=300, cluster="diarist"
    )
    assert one.estimate == 3.0 and np.isnan(one.low) and np.isnan(one.high)
    none = cluster_bootstrap(table.iloc[:0], mean_of("v"), resamples=300, cluster="diarist")
    assert np.isnan(none.estimate) and none.clusters == 0


def test_excludes_zero_follows_direction():
    iv = cluster_bootstrap(
        pd.DataFrame({"diarist": range(10), "v": np.linspace(1, 2, 10)}),
        mean_of("v"),
        seed=0,
        cluster="diarist",
    )
    assert iv.excludes_zero("greater") and not iv.excludes_zero("less")
