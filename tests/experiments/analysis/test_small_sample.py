"""The statistics hold at the lab's cluster counts, proved by seeded simulation: the default
table interval (jackknife t) and the sign-flip interval beside every verdict cover 93–97% at
n = 8 on normal and t3 data; the printed MDE is the effect the rule's test supports with 80%
power (simulated power at it within ±5%); a family Holm can never support at its cluster count
is refused by `design check`, with the fix."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from diarylab.experiments.analysis.bootstrap import cluster_bootstrap, mean_of
from diarylab.experiments.analysis.rules import (
    can_support,
    fewest_clusters,
    mde_sd,
    most_hypotheses,
    supports,
)
from diarylab.experiments.analysis.verdicts import decide, holm, sign_flip, sign_flip_bounds
from diarylab.experiments.cli import main
from diarylab.testing.lab_fixtures import design_text, make_profile

N = 8
TRUTH = 0.6


def _data(noise: str, draws: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if noise == "normal":
        return TRUTH + rng.normal(0.0, 1.0, (draws, N))
    return TRUTH + rng.standard_t(3, (draws, N))  # heavy tails, still symmetric


@pytest.mark.parametrize("noise", ["normal", "t3"])
def test_the_default_table_interval_covers_95_percent_at_8_clusters(noise):
    """The product path: cluster_bootstrap's default (jackknife t) on a per-entry table with
    two entries per cluster, the statistic the pooled mean over entries."""
    data = _data(noise, 1500, seed=21)
    assert cluster_bootstrap.__kwdefaults__["method"] == "t"
    covered = 0
    cluster = np.repeat(np.arange(N), 2)
    for row in data:
        # Each cluster's two entries share its value plus ±0.3: the mean is the cluster mean.
        table = pd.DataFrame({"c": cluster, "v": np.repeat(row, 2) + np.tile([0.3, -0.3], N)})
        iv = cluster_bootstrap(table, mean_of("v"), cluster="c")
        covered += iv.low <= TRUTH <= iv.high
    assert 0.93 <= covered / len(data) <= 0.97


@pytest.mark.parametrize("noise", ["normal", "t3"])
def test_the_sign_flip_interval_covers_95_percent_at_8_clusters(noise):
    data = _data(noise, 20_000, seed=22)
    low, high = sign_flip_bounds(data)
    coverage = float(np.mean((low <= TRUTH) & (high >= TRUTH)))
    assert 0.93 <= coverage <= 0.97
    # Exactly 1 - 12/256 under symmetry (Hartigan): 0.953, up to Monte Carlo error.
    assert coverage == pytest.approx(1 - 12 / 256, abs=0.006)


def test_the_jackknife_t_of_a_mean_is_students_t():
    from scipy import stats

    x = np.array([0.4, 1.1, -0.2, 0.9, 1.6, 0.3, 0.8, 1.2])
    iv = cluster_bootstrap(pd.DataFrame({"c": range(8), "v": x}), mean_of("v"), cluster="c")
    ref = stats.t.interval(0.95, 7, loc=x.mean(), scale=stats.sem(x))
    assert (iv.low, iv.high) == pytest.approx(ref)
    assert iv.method == "t" and iv.resamples == 0


@pytest.mark.parametrize(
    ("rule", "m", "printed"),
    # The review's numbers: 1.19 SD at 0.05, 1.41 at 0.025, 1.91 at 0.05/6 (the t formula's
    # 1.15, 1.32, 1.60 were optimistic); "intervals" is unadjusted (0.05 whatever m).
    [("holm", 1, 1.19), ("holm", 2, 1.41), ("holm", 6, 1.92), ("intervals", 6, 1.19)],
)
def test_the_mde_is_what_the_rule_supports_with_80_percent_power(rule, m, printed):
    effect = mde_sd(rule, N, m)
    assert effect == pytest.approx(printed, rel=0.03)
    # Fresh draws (another seed) at the printed MDE: power within ±5% of 80%.
    rng = np.random.default_rng(99)
    at_mde = effect + rng.normal(size=(20_000, N))
    power = float(np.mean(supports(rule, at_mde, m)))
    assert 0.76 <= power <= 0.84


def test_the_simulated_rule_is_the_verdict_the_report_reads():
    """`supports` (what the MDE simulates) decides exactly as the evaluator's verdicts do."""
    rng = np.random.default_rng(5)
    data = 1.0 + rng.normal(size=(300, N))
    simulated = supports("holm", data, 2)
    for row, said in zip(data, simulated, strict=True):
        test = sign_flip(list(row))
        # As the first of two hypotheses: its Holm-adjusted p is 2p when it is the smaller.
        [adjusted, _] = holm([test.p_two_sided, 1.0])
        assert (decide(test, adjusted, "greater") == "supported") == bool(said)
    low, _ = sign_flip_bounds(data)
    assert np.array_equal(supports("intervals", data, 6), low > 0)


def test_holm_can_support_nothing_past_six_hypotheses_at_8_clusters():
    assert can_support("holm", 8, 6) and not can_support("holm", 8, 7)
    assert most_hypotheses(8) == 6 and fewest_clusters("holm", 7) == 9
    assert math.isinf(mde_sd("holm", 8, 7))
    assert can_support("intervals", 8, 7) and not can_support("intervals", 5, 1)
    # The error rate the rule claims, at no effect: Holm's first step at 0.05/6 rejects
    # exactly the all-positive samples (1/256 one-sided).
    rng = np.random.default_rng(6)
    null = rng.normal(size=(40_000, N))
    assert float(np.mean(supports("holm", null, 6))) == pytest.approx(1 / 256, abs=0.001)
    assert float(np.mean(supports("intervals", null, 6))) <= 0.025 + 0.002


def _hypotheses(count: int) -> str:
    return "".join(
        f"""
[[hypotheses]]
id = "H{i}"
says = "steering raises the first-entry pattern score ({i})"
direction = "greater"
judges = ["tiny-judge"]
contrast = {{ kind = "first_entry_pattern", profile = "steered" }}
"""
        for i in range(1, count + 1)
    )


def test_design_check_refuses_seven_hypotheses_at_eight_diarists(
    tmp_path, tiny_model_folder, capsys
):
    profile = make_profile(tmp_path, tiny_model_folder)
    for count, code in ((7, 2), (6, 0)):
        path = tmp_path / f"design-{count}.toml"
        text = design_text(tiny_model_folder, profile, diarists='"all"', extra=_hypotheses(count))
        path.write_text(text)
        assert main(["design", "check", str(path)]) == code
        out, err = capsys.readouterr()
        if code == 2:
            assert "7 hypotheses name judge 'tiny-judge'" in err and "8 diarists" in err
            assert "at most 6 hypotheses per judge" in err and "at least 9 diarists" in err
            assert "Traceback" not in err
        else:
            assert "6 hypotheses at 8 diarists; rule holm: the verdict is supported" in out
            assert "with 80% power at 1.9" in out
