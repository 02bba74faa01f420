"""Shares and correlations keep their coverage at 8 clusters and never leave their scale (the
edges a mean ± t interval gets wrong), proved by seeded simulation: shares over a grid of
within-diarist correlation, replies per diarist and true share, where a cell that leaves 93–97%
must be one whose shares the report marks as near a bound."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from diarylab.experiments.analysis.bootstrap import cluster_bootstrap, mean_of, pearson_of
from diarylab.experiments.analysis.bounded import (
    clustered_share_bounds,
    correlation_interval,
    near_bound,
    share_interval,
)

CLUSTERS, PER = 8, 8
# The grid a share's interval is held to (issue: replies nested in diarists): within-diarist
# correlation (ICC of a beta-binomial), replies per diarist, the true share.
ICCS = (0.0, 0.1, 0.3, 0.5)
REPLIES = (4, 8, 16)
SHARES = (0.5, 0.7, 0.9, 0.95, 0.99)
DATASETS = 4000  # coverage to ±0.007 (two SEs) per cell


def _clustered_yes(rng: np.random.Generator, p: float, icc: float, replies: int) -> np.ndarray:
    """DATASETS × 8 diarists: each diarist's yes count out of `replies`, their own rates drawn
    from a beta with mean p whose intra-class correlation is `icc` (0: every rate is p)."""
    if icc == 0:
        rates = np.full((DATASETS, CLUSTERS), p)
    else:
        spread = 1 / icc - 1
        rates = rng.beta(p * spread, (1 - p) * spread, size=(DATASETS, CLUSTERS))
    return rng.binomial(replies, rates)


def _grid() -> list[dict[str, float]]:
    rng = np.random.default_rng(20261206)
    cells = []
    for icc in ICCS:
        for replies in REPLIES:
            for p in SHARES:
                yes = _clustered_yes(rng, p, icc, replies)
                size = np.full(yes.shape, replies)
                estimate, low, high = clustered_share_bounds(yes, size)
                marked = np.array([near_bound(e) for e in estimate])
                unanimous = (yes == 0).all(axis=1) | (yes == replies).all(axis=1)
                covered = (low <= p) & (p <= high)
                cells.append(
                    {"icc": icc, "replies": replies, "p": p}
                    | {"coverage": covered.mean(), "marked": marked.mean()}
                    | {"outside": np.mean((low < 0) | (high > 1))}
                    | {"unanimous": unanimous.sum(), "unanimous_covered": covered[unanimous].sum()}
                )
    return cells


@pytest.fixture(scope="module")
def grid() -> list[dict[str, float]]:
    return _grid()


def test_shares_never_leave_zero_to_one(grid):
    assert max(c["outside"] for c in grid) == 0


def test_share_coverage_holds_or_the_report_marks_the_share(grid):
    """Every cell covers 93–97%, or the report marks (near_bound) most of its shares; the mark
    is rare where the share is away from its bounds, so it is not a blanket disclaimer."""
    unmarked_misses = [c for c in grid if not 0.93 <= c["coverage"] <= 0.97 and c["marked"] < 2 / 3]
    assert unmarked_misses == []
    assert max(c["marked"] for c in grid if c["p"] <= 0.7) <= 0.15
    assert all(0.93 <= c["coverage"] <= 0.97 for c in grid if c["p"] <= 0.7)


def test_unanimous_samples_are_covered(grid):
    """A unanimous sample from alike replies is what broke the old interval (n_eff = replies):
    at p = 0.95 every one missed. Counted as 8 diarists' worth, they cover."""
    at = [c for c in grid if c["p"] in (0.9, 0.95) and c["unanimous"]]
    unanimous = sum(c["unanimous"] for c in at)
    assert unanimous > 500
    assert sum(c["unanimous_covered"] for c in at) / unanimous >= 0.95


def test_the_table_path_is_the_simulated_rule():
    """share_interval on a table of replies (what the report runs) equals the closed-form rule
    the grid simulates."""
    rng = np.random.default_rng(5)
    for icc, p in ((0.3, 0.9), (0.0, 0.6), (0.5, 0.97)):
        yes = _clustered_yes(rng, p, icc, 6)[:25]
        sizes = rng.integers(3, 9, size=yes.shape)
        yes = np.minimum(yes, sizes)
        estimate, low, high = clustered_share_bounds(yes, sizes)
        for i in range(len(yes)):
            values = np.concatenate(
                [[1.0] * y + [0.0] * (n - y) for y, n in zip(yes[i], sizes[i], strict=True)]
            )
            table = pd.DataFrame({"c": np.repeat(np.arange(CLUSTERS), sizes[i]), "v": values})
            iv = share_interval(table, mean_of("v"), cluster="c")
            assert (iv.estimate, iv.low, iv.high) == pytest.approx(
                (estimate[i], low[i], high[i]), abs=1e-12
            )


def _share_data(rng: np.random.Generator, p: float) -> pd.DataFrame:
    """8 diarists × 8 replies; each diarist's own rate drawn around p (clustered answers)."""
    rates = rng.beta(p * 10, (1 - p) * 10, size=CLUSTERS)
    yes = rng.uniform(size=(CLUSTERS, PER)) < rates[:, None]
    return pd.DataFrame({"c": np.repeat(np.arange(CLUSTERS), PER), "v": yes.ravel() * 1.0})


def test_mean_plus_t_is_what_this_replaces():
    """On shares near 1 the mean ± t interval covers far too little; Wilson at the
    cluster-effective n does not."""
    rng = np.random.default_rng(97)
    t_cover = w_cover = 0
    for _ in range(400):
        table = _share_data(rng, 0.97)
        t_iv = cluster_bootstrap(table, mean_of("v"), cluster="c")
        w_iv = share_interval(table, mean_of("v"), cluster="c")
        t_cover += t_iv.low <= 0.97 <= t_iv.high
        w_cover += w_iv.low <= 0.97 <= w_iv.high
    assert t_cover / 400 < 0.85 < 0.93 <= w_cover / 400


def test_a_unanimous_sample_keeps_the_width_of_its_diarists():
    table = pd.DataFrame({"c": np.repeat(np.arange(8), 4), "v": 1.0})
    iv = share_interval(table, mean_of("v"), cluster="c")
    assert iv.estimate == 1.0 and iv.high == 1.0
    # 8 diarists all yes: Wilson at n = 8 with t(7), whatever the replies per diarist.
    assert iv.low == pytest.approx(8 / (8 + 2.364624**2), abs=1e-4)
    assert near_bound(iv.estimate) and not near_bound(0.5)


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
