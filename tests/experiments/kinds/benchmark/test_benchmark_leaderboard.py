"""Intervals, paired comparisons (Holm), calibration through two anchors with their own
uncertainty, and judge agreement, on graded tables built by hand."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from diarylab.experiments.kinds.benchmark.calibrate import AnchorPoint, line
from diarylab.experiments.kinds.benchmark.leaderboard import agreement, board
from diarylab.experiments.kinds.benchmark.scoring import GRADED_COLUMNS


def table(rates: dict[tuple[str, str], float], conversations: int = 40, seed: int = 0):
    """Each conversation has two +1 criteria; chatbot × judge meets each with the given rate."""
    rng = np.random.default_rng(seed)
    rows = []
    for (judge, bot), rate in rates.items():
        for c in range(conversations):
            for k in range(2):
                p = 0.9 if rng.random() < rate else 0.1
                rows.append((judge, bot, f"c{c}", "non_acute", f"c{c}#{k}", "ax", 1.0, p))
    return pd.DataFrame(rows, columns=list(GRADED_COLUMNS))


def test_scores_intervals_and_holm_corrected_comparisons():
    graded = table({("j", "low"): 0.2, ("j", "mid"): 0.5, ("j", "high"): 0.85})
    result = board(graded, "mentalhealthbench", "met", resamples=400, seed=1)
    by = {s.chatbot: s for s in result.scores}
    for s in by.values():
        assert s.low <= s.score <= s.high and s.scored == 40
    assert by["low"].score < by["mid"].score < by["high"].score
    pairs = {(c.a, c.b): c for c in result.comparisons}
    assert len(pairs) == 3
    high_low = pairs[("high", "low")]
    assert high_low.difference == pytest.approx(by["high"].score - by["low"].score)
    assert high_low.p < 0.01 and high_low.low > 0
    assert all(c.p_holm >= c.p for c in pairs.values())
    smallest = min(pairs.values(), key=lambda c: c.p)
    assert smallest.p_holm == pytest.approx(min(1.0, 3 * smallest.p))


def test_the_map_is_exact_on_the_anchors_and_carries_their_uncertainty():
    assert line(
        np.array([0.5]), np.array([0.2]), np.array([0.8]), np.array([0.1]), np.array([0.4])
    )[0] == pytest.approx(0.25)
    graded = table({("j", "haiku"): 0.3, ("j", "opus"): 0.8, ("j", "ours"): 0.55})
    exact = (AnchorPoint("haiku", 0.30, 0.0), AnchorPoint("opus", 0.60, 0.0))
    fuzzy = (AnchorPoint("haiku", 0.30, 0.03), AnchorPoint("opus", 0.60, 0.03))
    sharp = {s.chatbot: s for s in board(graded, "healthbench", "met", 400, 2, exact).scores}
    wide = {s.chatbot: s for s in board(graded, "healthbench", "met", 400, 2, fuzzy).scores}
    assert sharp["haiku"].mapped[0] == pytest.approx(0.30)
    assert sharp["opus"].mapped[0] == pytest.approx(0.60)
    # The anchors map onto their published scores in every resample when those are exact...
    assert sharp["opus"].mapped[1] == pytest.approx(0.60) == sharp["opus"].mapped[2]
    # ...and the other chatbot sits where the line puts its raw score.
    h, o, x = sharp["haiku"].score, sharp["opus"].score, sharp["ours"].score
    assert sharp["ours"].mapped[0] == pytest.approx(0.30 + (x - h) * 0.30 / (o - h))
    width = lambda s: s.mapped[2] - s.mapped[1]  # noqa: E731
    assert width(wide["ours"]) > width(sharp["ours"]) > 0
    assert width(wide["opus"]) > 0.05


def test_judge_severity_and_ranking_agreement():
    rates = {}
    for bot, rate in {"a": 0.2, "b": 0.5, "c": 0.8}.items():
        rates[("lenient", bot)] = min(rate + 0.15, 1.0)
        rates[("strict", bot)] = rate
    result = board(table(rates, conversations=60), "mentalhealthbench", "met", 200, 3)
    found = agreement(result.scores)
    assert found.severity["strict"] < 0 < found.severity["lenient"]
    assert found.severity["strict"] == pytest.approx(-found.severity["lenient"])
    [(a, b, tau, n)] = found.tau
    assert {a, b} == {"lenient", "strict"} and tau == pytest.approx(1.0) and n == 3


def _mapped_coverage(reps: int, use_se: bool, n: int = 200, se: float = 0.03) -> float:
    """How often the mapped interval of a third chatbot holds its true published-scale score,
    when the anchors' published scores carry noise `se` (and the map is told it, or not)."""
    from diarylab.experiments.analysis.bootstrap import draw_counts
    from diarylab.experiments.kinds.benchmark.calibrate import calibrated
    from diarylab.experiments.kinds.benchmark.scoring import aggregate

    rng = np.random.default_rng(11)
    means = {"a": 0.3, "b": 0.7, "c": 0.5}  # true lab scores
    published = {"a": 0.34, "b": 0.66}  # true published scores of the anchors
    slope = (published["b"] - published["a"]) / (means["b"] - means["a"])
    truth = published["a"] + (means["c"] - means["a"]) * slope
    hits = 0
    for _ in range(reps):
        values = {b: rng.beta(4 * m, 4 * (1 - m), n) for b, m in means.items()}  # sd ≈ 0.2
        weights = draw_counts(n, 400, rng)
        point = {b: float(aggregate(v, "healthbench")[0]) for b, v in values.items()}
        boot = {b: aggregate(v, "healthbench", weights) for b, v in values.items()}
        anchors = tuple(
            AnchorPoint(b, p + se * rng.standard_normal(), se if use_se else 0.0)
            for b, p in published.items()
        )
        _, low, high = calibrated(point, boot, anchors, rng)["c"]  # type: ignore[arg-type]
        hits += low <= truth <= high
    return hits / reps


def test_the_mapped_interval_covers_when_the_anchors_se_is_carried():
    """Why an anchor's se is required: carried through the bootstrap, the 95% mapped interval
    covers 95%; left at 0 (what a missing se used to mean) it covers about 73% here."""
    assert 0.92 <= _mapped_coverage(300, use_se=True) <= 0.98
    assert _mapped_coverage(300, use_se=False) < 0.85


def _negative_table(conversations: int = 200) -> pd.DataFrame:
    """Each conversation: one +1 criterion and one −3 (a harm); "bad" meets the harm more often
    than "worse" does not, so both score below zero unclipped (about −0.4 and −0.8)."""
    rng = np.random.default_rng(9)
    rows = []
    for bot, harm in (("bad", 0.35), ("worse", 0.65)):
        for c in range(conversations):
            met_good = 0.9 if rng.random() < 0.9 else 0.1
            met_harm = 0.9 if rng.random() < harm else 0.1
            rows.append(("j", bot, f"c{c}", "non_acute", f"c{c}#0", "ax", 1.0, met_good))
            rows.append(("j", bot, f"c{c}", "non_acute", f"c{c}#1", "ax", -3.0, met_harm))
    return pd.DataFrame(rows, columns=list(GRADED_COLUMNS))


def test_a_clipped_comparison_reports_difference_interval_and_p_of_one_quantity():
    """HealthBench clips the mean: both chatbots show 0.000, yet they differ. The comparison is
    of the unclipped per-conversation scores, its difference, interval and p alike; under the
    MentalHealthBench convention all three are of the clipped per-conversation scores."""
    from diarylab.experiments.analysis.verdicts import sign_flip
    from diarylab.experiments.kinds.benchmark.scoring import per_conversation

    graded = _negative_table()
    hb = board(graded, "healthbench", "met", resamples=400, seed=1)
    assert {s.score for s in hb.scores} == {0.0}
    [c] = hb.comparisons
    raw = {
        b: per_conversation(graded[graded["chatbot"] == b], "met").score for b in ("bad", "worse")
    }
    d = raw["bad"] - raw["worse"]
    assert c.difference == pytest.approx(d.mean()) and c.difference > 0.1
    assert c.low <= c.difference <= c.high and c.low > 0  # the interval agrees with p
    assert c.p == pytest.approx(sign_flip(d, seed=1).p_two_sided) and c.p < 0.05
    assert "unclipped" in c.quantity
    mhb = board(graded, "mentalhealthbench", "met", resamples=400, seed=1)
    [m] = mhb.comparisons
    clipped = np.clip(raw["bad"], 0, 1) - np.clip(raw["worse"], 0, 1)
    assert m.difference == pytest.approx(clipped.mean())
    assert m.p == pytest.approx(sign_flip(clipped, seed=1).p_two_sided)
    assert "clipped" in m.quantity and "unclipped" not in m.quantity
    if np.allclose(clipped, 0):  # nothing left to compare: no difference, no evidence
        assert m.low == m.high == 0 and m.p == 1
