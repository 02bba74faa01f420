"""Shares and correlations keep their coverage near their bounds at 8 clusters and never leave
their scale (the edges a mean ± t interval gets wrong), proved by seeded simulation."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from diarylab.experiments.analysis.bootstrap import cluster_bootstrap, mean_of, pearson_of
from diarylab.experiments.analysis.bounded import correlation_interval, share_interval

CLUSTERS, PER = 8, 8


def _share_data(rng: np.random.Generator, p: float) -> pd.DataFrame:
    """8 diarists × 8 replies; each diarist's own rate drawn around p (clustered answers)."""
    rates = rng.beta(p * 10, (1 - p) * 10, size=CLUSTERS)
    yes = rng.uniform(size=(CLUSTERS, PER)) < rates[:, None]
    return pd.DataFrame({"c": np.repeat(np.arange(CLUSTERS), PER), "v": yes.ravel() * 1.0})


@pytest.mark.parametrize("p", [0.5, 0.9, 0.97])
def test_shares_cover_and_never_leave_zero_to_one(p):
    rng = np.random.default_rng(int(p * 100))
    covered, outside, datasets = 0, 0, 1500
    for _ in range(datasets):
        table = _share_data(rng, p)
        iv = share_interval(table, mean_of("v"), cluster="c", rows=len(table))
        covered += iv.low <= p <= iv.high
        outside += iv.low < 0 or iv.high > 1
    assert outside == 0
    assert covered / datasets >= 0.93
    if p == 0.97:  # the mean ± t interval on the same data: what this replaces
        t_cover = 0
        for _ in range(400):
            table = _share_data(rng, p)
            iv = cluster_bootstrap(table, mean_of("v"), cluster="c")
            t_cover += iv.low <= p <= iv.high
        assert t_cover / 400 < 0.85


def test_a_unanimous_sample_keeps_a_width():
    table = pd.DataFrame({"c": np.repeat(np.arange(8), 4), "v": 1.0})
    iv = share_interval(table, mean_of("v"), cluster="c", rows=len(table))
    assert iv.estimate == 1.0 and iv.high == 1.0 and 0.8 < iv.low < 0.99


@pytest.mark.parametrize("rho", [0.3, 0.9, 0.97])
def test_fisher_z_correlations_cover_and_never_reach_one(rho):
    rng = np.random.default_rng(int(rho * 1000))
    covered, at_bound, datasets = 0, 0, 1500
    cluster = np.repeat(np.arange(CLUSTERS), 4)
    for _ in range(datasets):
        x = rng.normal(size=cluster.size)
        y = rho * x + np.sqrt(1 - rho**2) * rng.normal(size=cluster.size)
        table = pd.DataFrame({"c": cluster, "x": x, "y": y})
        iv = correlation_interval(table, pearson_of("x", "y"), cluster="c")
        covered += iv.low <= rho <= iv.high
        at_bound += iv.low <= -1 or iv.high >= 1
    assert at_bound == 0
    assert 0.93 <= covered / datasets <= 0.97
