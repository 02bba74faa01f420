"""Benchmark scores computed by hand: negative criteria, an all-negative rubric (no score),
an ungraded criterion (no score), a case where the two clipping conventions differ, expected
points as the smooth score, axis scores that add up to the overall, and per-acuity scores."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from diarylab.experiments.kinds.benchmark.scoring import (
    GRADED_COLUMNS,
    aggregate,
    axis_aggregate,
    excluded,
    per_conversation,
    score,
    strata_scores,
)

NAN = math.nan
# conversation, stratum, axis, points, P(met)
ROWS = [
    ("A", "non_acute", "empathy", 5, 0.9),
    ("A", "non_acute", "context", 3, 0.2),
    ("A", "non_acute", "empathy", -4, 0.7),
    ("B", "emergent", "safety", 10, 0.1),
    ("B", "emergent", "empathy", -7, 0.8),
    ("C", "high_acuity", "harm", -8, 0.3),  # all-negative rubric
    ("C", "high_acuity", "empathy", -5, 0.6),
    ("D", "high_acuity", "context", 4, 0.6),
    ("D", "high_acuity", "safety", 6, NAN),  # ungraded
    ("E", "non_acute", "context", 2, 0.95),
]


def graded() -> pd.DataFrame:
    rows = [("j", "bot", c, s, f"{c}#{i}", a, p, m) for i, (c, s, a, p, m) in enumerate(ROWS)]
    return pd.DataFrame(rows, columns=list(GRADED_COLUMNS))


def test_per_conversation_scores_by_hand():
    met = per_conversation(graded(), "met")
    assert met.conversations == ("A", "B", "C", "D", "E")
    # A: (5 - 4) / 8; B: -7 / 10; C: no positive points; D: ungraded criterion; E: 2 / 2.
    np.testing.assert_allclose(met.score, [0.125, -0.7, NAN, NAN, 1.0])
    smooth = per_conversation(graded(), "expected")
    # A: (0.9*5 + 0.2*3 - 0.7*4) / 8; B: (0.1*10 - 0.8*7) / 10.
    np.testing.assert_allclose(smooth.score, [2.3 / 8, -0.46, NAN, NAN, 1.9 / 2])
    assert excluded(graded()) == {
        "no positive points": 1,
        "ungraded or unreadable criterion": 1,
    }


def test_the_two_conventions_differ_where_a_conversation_is_negative():
    values = per_conversation(graded(), "met").score
    # MentalHealthBench: mean(0.125, max(-0.7, 0), 1.0); HealthBench: clip(mean(0.125, -0.7, 1)).
    assert score(values, "mentalhealthbench") == pytest.approx((0.125 + 0 + 1.0) / 3)
    assert score(values, "healthbench") == pytest.approx((0.125 - 0.7 + 1.0) / 3)
    assert score(np.array([-0.5, 0.1]), "healthbench") == 0.0  # the mean clipped at 0
    assert score(np.array([-0.5, 0.1]), "mentalhealthbench") == pytest.approx(0.05)


def test_mentalhealthbench_axes_add_up_to_the_unclipped_score():
    pc = per_conversation(graded(), "met")
    axes = {a: float(axis_aggregate(v, "contributed")[0]) for a, v in pc.contributed.items()}
    # Over the scored conversations A, B, E (an axis a conversation lacks adds 0):
    assert axes["empathy"] == pytest.approx((0.125 - 0.7 + 0) / 3)
    assert axes["context"] == pytest.approx((0 + 0 + 1.0) / 3)
    assert axes["safety"] == pytest.approx(0.0)
    assert sum(axes.values()) == pytest.approx(np.nanmean(pc.score))
    # With no negative conversation the parts add up to the clipped overall score too.
    positive = graded()[graded().conversation.isin(["A", "E"])]
    pc2 = per_conversation(positive, "met")
    parts = sum(float(axis_aggregate(v, "contributed")[0]) for v in pc2.contributed.values())
    assert parts == pytest.approx(score(pc2.score, "mentalhealthbench")) == pytest.approx(0.5625)


def test_healthbench_axes_use_their_own_points():
    pc = per_conversation(graded(), "met")
    axes = {a: float(axis_aggregate(v, "within")[0]) for a, v in pc.within.items()}
    # empathy: A (5 - 4) / 5 only (B has no positive empathy points); context: A 0/3, E 2/2.
    assert axes["empathy"] == pytest.approx(0.2)
    assert axes["context"] == pytest.approx(0.5)
    assert axes["safety"] == pytest.approx(0.0)


def test_per_acuity_scores():
    pc = per_conversation(graded(), "met")
    by = strata_scores(pc, "mentalhealthbench")
    assert by["non_acute"] == pytest.approx((0.125 + 1.0) / 2)
    assert by["emergent"] == 0.0
    assert math.isnan(by["high_acuity"])  # both of its conversations have no score


def test_weights_are_resamples():
    values = np.array([0.125, -0.7, NAN, 1.0])
    weights = np.array([[1, 1, 1, 1], [2, 0, 1, 1], [0, 0, 3, 0]])
    got = aggregate(values, "mentalhealthbench", weights)
    assert got[0] == pytest.approx(score(values, "mentalhealthbench"))
    assert got[1] == pytest.approx((2 * 0.125 + 1.0) / 3)
    assert math.isnan(got[2])
