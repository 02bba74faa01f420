"""Intervals, paired comparisons (Holm), calibration through two anchors with their own
uncertainty, and judge agreement, on graded tables built by hand."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from experiments.kinds.benchmark.calibrate import AnchorPoint, line
from experiments.kinds.benchmark.leaderboard import agreement, board
from experiments.kinds.benchmark.scoring import GRADED_COLUMNS


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
