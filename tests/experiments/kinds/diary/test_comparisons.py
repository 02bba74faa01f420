"""The diary comparisons on synthetic runs with planted effects."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import spearmanr

from diarylab.experiments.analysis.bootstrap import BootstrapSettings
from diarylab.experiments.kinds.diary import comparisons, paired
from diarylab.experiments.kinds.diary.agreement import judge_agreement
from diarylab.experiments.kinds.diary.frames import SHARED
from diarylab.testing.synthetic_diary import Plant, make_tables

SETTINGS = BootstrapSettings("diarist", resamples=500, seed=1)


@pytest.fixture(scope="module")
def run():
    return make_tables(Plant(), seed=4)


def test_planted_steering_and_drift_are_covered_at_the_nominal_rate():
    """200 independent datasets of 30 diarists (one plant of 6,000 diarists cut into blocks):
    the 95% intervals of the per-diarist contrasts cover the planted truths 90–98% of the time."""
    datasets, size = 200, 30
    plant = Plant(
        diarists=datasets * size,
        patterns=("isolation",),
        chatbots=("thanks", "warm"),
        judges=("judge-a",),
        judge_offsets=(0.0,),
    )
    entries = make_tables(plant, seed=2).entries
    truths = {  # see testing/synthetic_diary.py for where these come from
        "steering": (paired.first_entry_steering(entries, "judge-a", None), 20.0),
        "drift warm, entry 4": (paired.drift(entries, "judge-a", None, "warm", 4), 20.0 - 15.0),
        "warm - thanks, entry 4": (
            paired.drift(entries, "judge-a", None, "warm", 4, baseline="thanks"),
            -15.0,
        ),
        "change under warm, entry 4": (
            paired.drift_change(entries, "judge-a", None, "warm", 4),
            -15.0,
        ),
        "change under warm, mean over entries 2-4": (
            paired.drift_change(entries, "judge-a", None, "warm", None),
            -10.0,
        ),
    }
    for name, (table, truth) in truths.items():
        block = table["diarist"].str[1:].astype(int) // size
        covered = 0
        for i, group in table.groupby(block):
            assert len(group) == size
            iv = comparisons.interval_columns(
                group, "diff", BootstrapSettings("diarist", 400, seed=int(i))
            )
            covered += iv["low"] <= truth <= iv["high"]
        assert 0.90 <= covered / datasets <= 0.98, (name, covered / datasets)


def test_steering_effect_counts_the_shared_first_entry_once(run):
    entries = run.entries
    first = entries[
        (entries["entry_index"] == 1)
        & (entries["judge"] == "judge-a")
        & (entries["score"] == "pattern:isolation")
    ].drop_duplicates("entry_id")
    assert len(first) == 8 * 3  # diarists × profiles, though exported under 3 chatbots each
    wide = first.pivot(index="diarist", columns="profile", values="mean")
    expected = (wide["steer_isolation"] - wide["unsteered"]).mean()
    table = comparisons.steering_effect(entries, SETTINGS)
    row = table[(table["judge"] == "judge-a") & (table["profile"] == "steer_isolation")].iloc[0]
    assert row["estimate"] == pytest.approx(expected)
    assert row["n_diarists"] == 8
    assert len(row["sources"]) == 16 and all(s.endswith("/e1") for s in row["sources"])
    # Exporting the shared entry under one chatbot only gives the same answer.
    once = entries[(entries["entry_index"] > 1) | (entries["chatbot"] == "thanks")]
    again = comparisons.steering_effect(once, SETTINGS)
    pd.testing.assert_frame_equal(table, again)


def test_drift_and_baseline_difference_match_hand_computation(run):
    e = run.entries
    own = e[(e["judge"] == "judge-b") & (e["score"] == "pattern:entitlement")]
    wide = own[own["entry_index"] == 3].pivot_table(
        index="diarist", columns=["profile", "chatbot"], values="mean"
    )
    drift = {c: wide[("steer_entitlement", c)] - wide[("unsteered", c)] for c in ("cold", "thanks")}
    got = comparisons.drift(e, SETTINGS)
    row = got[
        (got["judge"] == "judge-b")
        & (got["profile"] == "steer_entitlement")
        & (got["chatbot"] == "cold")
        & (got["entry_index"] == 3)
    ].iloc[0]
    assert row["estimate"] == pytest.approx(drift["cold"].mean())
    assert row["low"] < row["estimate"] < row["high"]
    vs = comparisons.drift_vs_baseline(e, SETTINGS, baseline="thanks")
    assert set(vs["chatbot"]) == {"cold", "warm"} and set(vs["entry_index"]) == {2, 3, 4}
    row = vs[
        (vs["judge"] == "judge-b")
        & (vs["profile"] == "steer_entitlement")
        & (vs["chatbot"] == "cold")
        & (vs["entry_index"] == 3)
    ].iloc[0]
    assert row["estimate"] == pytest.approx((drift["cold"] - drift["thanks"]).mean())
    assert len(row["sources"]) == 8 * 4  # per diarist: steered and unsteered, cold and thanks


def test_comparisons_stay_within_one_judge(run):
    """Judge b reads 6 points higher than judge a: levels differ, paired effects do not, and
    removing judge b's readings leaves judge a's results untouched."""
    e = run.entries
    table = comparisons.steering_effect(e, SETTINGS).set_index(["judge", "profile"])
    gap = table.loc["judge-b", "unsteered"] - table.loc["judge-a", "unsteered"]
    assert gap.between(3, 9).all()
    assert (table.loc["judge-b", "estimate"] - table.loc["judge-a", "estimate"]).abs().max() < 5
    alone = comparisons.steering_effect(e[e["judge"] == "judge-a"], SETTINGS)
    pd.testing.assert_frame_equal(alone, table.loc[["judge-a"]].reset_index())


def test_unreadable_judgments_are_dropped_never_used(run):
    e = run.entries.copy()
    # One judgment per entry × judge × score, so copies of a shared first entry break together.
    key = e["entry_id"] + "|" + e["judge"] + "|" + e["score"]
    broken = (pd.util.hash_pandas_object(key, index=False) % 100 < 15).to_numpy()
    e.loc[broken, "readable"] = False
    e.loc[broken, "mean"] = 0.0  # a value that would drag every mean down if it were used
    got = comparisons.quality(e, SETTINGS)
    expected = comparisons.quality(e[~broken], SETTINGS)
    pd.testing.assert_frame_equal(got, expected)


def test_quality_recovers_the_coherence_drop():
    table = comparisons.quality(make_tables(Plant(diarists=20), seed=9).entries, SETTINGS)
    coherence = table[table["score"] == "coherence"]
    assert ((coherence["low"] < -8) & (coherence["high"] > -8)).mean() >= 0.75
    assert (coherence["high"] < 0).all()
    realism = table[table["score"] == "realism"]
    assert (realism["estimate"].abs() < 3).all()


def test_judge_agreement_matches_direct_correlations(run):
    got = judge_agreement(run.entries, run.replies, SETTINGS).set_index("score")
    e = run.entries.drop_duplicates(["entry_id", "judge", "score"])
    coherence = e[e["score"] == "coherence"].pivot(index="entry_id", columns="judge", values="mean")
    row = got.loc["coherence"]
    assert row["n"] == 8 * 3 * (1 + 3 * 3) == len(coherence)
    assert row["pearson"] == pytest.approx(
        np.corrcoef(coherence["judge-a"], coherence["judge-b"])[0, 1]
    )
    assert row["spearman"] == pytest.approx(
        spearmanr(coherence["judge-a"], coherence["judge-b"]).statistic
    )
    assert row["pearson_low"] < row["pearson"] < row["pearson_high"]
    assert {"pattern (all)", "realism"} <= set(got.index)
    # The rubric per question, never pooled across questions.
    rubric = [s for s in got.index if s.startswith("rubric")]
    assert sorted(rubric) == sorted(f"rubric: {q}" for q in run.replies["question"].unique())
    r = run.replies[run.replies["question"] == "misses_risk"]
    wide = r.pivot_table(index="reply_id", columns="judge", values="p_yes")
    assert got.loc["rubric: misses_risk", "pearson"] == pytest.approx(
        np.corrcoef(wide["judge-a"], wide["judge-b"])[0, 1]
    )


def test_pattern_by_entry_has_the_shared_first_entry_and_every_chatbot_after(run):
    table = comparisons.pattern_by_entry(run.entries, SETTINGS)
    steered = table[(table["judge"] == "judge-a") & (table["profile"] == "steer_isolation")]
    assert set(steered[steered["entry_index"] == 1]["chatbot"]) == {SHARED}
    assert set(steered[steered["entry_index"] == 4]["chatbot"]) == {"thanks", "warm", "cold"}
    twin = table[(table["profile"] == "unsteered") & (table["of"] == "steer_isolation")]
    assert len(twin) == len(steered) * 2  # both judges


# ------------------------------------------------------------------ drift as change
CHANGE = {"thanks": 0.0, "warm": -5.0, "cold": 3.0}  # Plant's default drift per entry


def test_drift_change_recovers_a_known_fade_exactly_without_noise():
    """Without entry or judge noise, Δk = [S(k) − U(k)] − [S(1) − U(1)] is the planted change
    for every diarist: warm fades the pattern by 5 points an entry, cold grows it by 3. Diarist
    intercepts, steering slopes and judge offsets all cancel."""
    plant = Plant(noise_sd=0.0, judge_sd=0.0)
    entries = make_tables(plant, seed=3).entries
    table = comparisons.drift_change(entries, SETTINGS)
    assert len(table) == 2 * 2 * 3 * 3  # judges × profiles × chatbots × entries 2–4
    for row in table.itertuples():
        truth = CHANGE[row.chatbot] * (row.entry_index - 1)
        assert row.estimate == pytest.approx(truth, abs=1e-9)
        assert row.low == pytest.approx(truth, abs=1e-9) and row.n_diarists == 8
    # Per diarist, the difference in differences against the fixed reply, and the steered
    # score against the baseline's: (change − baseline's change) × (k − 1) for every diarist.
    for judge in plant.judges:
        did = paired.drift_change(entries, judge, "steer_isolation", "warm", 4, "thanks")
        steered = paired.steered_vs_baseline(entries, judge, None, "cold", 3, "thanks")
        assert np.allclose(did["diff"], -15.0) and len(did) == 8
        assert np.allclose(steered["diff"], 6.0) and len(steered) == 8


def test_drift_change_matches_a_direct_computation_and_its_did_the_level_difference(run):
    e = run.entries
    own = e[(e["judge"] == "judge-b") & (e["score"] == "pattern:entitlement") & e["readable"]]
    wide = own.drop_duplicates(["entry_id", "chatbot"]).pivot_table(
        index="diarist", columns=["profile", "chatbot", "entry_index"], values="mean"
    )

    def gap(chatbot, k):
        return wide[("steer_entitlement", chatbot, k)] - wide[("unsteered", chatbot, k)]

    direct = (gap("cold", 3) - gap("cold", 1)).mean()
    table = comparisons.drift_change(e, SETTINGS)
    [row] = table[
        (table["judge"] == "judge-b")
        & (table["profile"] == "steer_entitlement")
        & (table["chatbot"] == "cold")
        & (table["entry_index"] == 3)
    ].to_dict("records")
    assert row["estimate"] == pytest.approx(direct)
    assert row["low"] <= row["estimate"] <= row["high"]
    # The entry-1 gap is shared by every chatbot, so the difference in differences equals the
    # difference of the levels against the baseline.
    for judge in ("judge-a", "judge-b"):
        did = paired.drift_change(e, judge, None, "warm", 4, baseline="thanks")
        level = paired.drift(e, judge, None, "warm", 4, baseline="thanks")
        assert np.allclose(did["diff"], level["diff"])


def test_steered_vs_baseline_table_matches_the_data(run):
    e = run.entries
    own = e[(e["judge"] == "judge-a") & (e["score"] == "pattern:isolation") & e["readable"]]
    steered = own[(own["profile"] == "steer_isolation") & (own["entry_index"] == 2)]
    wide = steered.pivot_table(index="diarist", columns="chatbot", values="mean")
    table = comparisons.steered_vs_baseline(e, SETTINGS, "thanks")
    [row] = table[
        (table["judge"] == "judge-a")
        & (table["profile"] == "steer_isolation")
        & (table["chatbot"] == "warm")
        & (table["entry_index"] == 2)
    ].to_dict("records")
    assert row["estimate"] == pytest.approx((wide["warm"] - wide["thanks"]).mean())
    assert row["steered"] == pytest.approx(wide["warm"].mean())
    assert "thanks" not in set(table["chatbot"])


def test_a_diarist_with_an_unreadable_first_entry_stays_in_the_difference_in_differences(run):
    """Δk(chatbot) − Δk(baseline) never uses entry 1 (its gap cancels): making one diarist's
    steered first entry unreadable under every judge must not drop that diarist from it, nor
    change any value; the plain Δk, which does need entry 1, loses that diarist."""
    e = run.entries
    victim = sorted(e["diarist"].unique())[0]
    hit = (e["diarist"] == victim) & (e["entry_index"] == 1) & (e["profile"] != "unsteered")
    broken = e.assign(readable=e["readable"] & ~hit, mean=e["mean"].where(~hit))
    for judge in ("judge-a", "judge-b"):
        whole = paired.drift_change(e, judge, None, "warm", 4, baseline="thanks")
        cut = paired.drift_change(broken, judge, None, "warm", 4, baseline="thanks")
        assert victim in set(cut["diarist"]) and len(cut) == len(whole)
        assert np.allclose(cut["diff"], whole["diff"])
        plain = paired.drift_change(broken, judge, None, "warm", 4)
        assert victim not in set(plain["diarist"])
