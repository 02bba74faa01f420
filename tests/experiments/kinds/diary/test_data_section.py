"""Missing cells are shown where they are lost: per arm (profile × chatbot) the entries a
complete run has against those written and readable, and on every paired row the diarists
expected beside those present, with bounds where more than a tenth were lost."""

from __future__ import annotations

import math

import numpy as np
import pytest

from diarylab.experiments.analysis.bootstrap import BootstrapSettings
from diarylab.experiments.kinds.diary import comparisons
from diarylab.experiments.kinds.diary.comparisons import lost_bounds
from diarylab.experiments.kinds.diary.data_section import arm_counts, data_section
from diarylab.testing.synthetic_diary import Plant, make_tables

SETTINGS = BootstrapSettings("diarist", resamples=200, seed=1)


def test_lost_bounds_put_the_lost_diarists_lowest_and_highest():
    x = np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, np.nan, np.nan])
    low, high = lost_bounds(x, 8)
    assert low == pytest.approx((21 + 2 * 1) / 8) and high == pytest.approx((21 + 2 * 6) / 8)
    assert all(math.isnan(v) for v in lost_bounds(np.arange(8.0), 8))  # nothing lost


def test_an_arm_that_lost_a_diarist_is_counted_and_its_rows_get_bounds():
    tables = make_tables(Plant(), seed=3)
    lost = tables.entries[
        ~(
            (tables.entries["diarist"] == "d0001")
            & (tables.entries["profile"] == "steer_isolation")
            & (tables.entries["chatbot"] == "warm")
            & (tables.entries["entry_index"] >= 2)
        )
    ]
    tables = type(tables)(**{**tables.__dict__, "entries": lost})
    counts = arm_counts(tables, 4)
    arm = counts[
        (counts["profile"] == "steer_isolation")
        & (counts["chatbot"] == "warm")
        & (counts["judge"] == "judge-a")
    ].iloc[0]
    assert (arm["expected"], arm["written"], arm["readable"]) == (24, 21, 21)
    whole = counts[(counts["chatbot"] == "cold") & (counts["judge"] == "judge-a")]
    assert (whole["expected"] == whole["written"]).all()
    text = data_section(tables, None, {"design": {"entries": 4}})
    assert "Entries per arm: expected, written, readable" in text
    assert "arms lost entries" in text
    drift = comparisons.drift(tables.entries, SETTINGS)
    row = drift[
        (drift["profile"] == "steer_isolation")
        & (drift["chatbot"] == "warm")
        & (drift["judge"] == "judge-a")
    ].iloc[0]
    assert (row["n_diarists"], row["n_expected"]) == (7, 8)
    assert row["lost_low"] <= row["estimate"] <= row["lost_high"]
    complete = drift[drift["chatbot"] == "cold"].iloc[0]
    assert complete["n_expected"] == complete["n_diarists"] == 8
    assert math.isnan(complete["lost_low"])
