"""The friends kind's primary outcome: each writer's mean pattern score over their outcome
letters (2–3 by default) only; the per-card contrast and its writer groups."""

from __future__ import annotations

import math

import pytest

from diarylab.experiments.kinds.friends.contrast import OutcomeContrast, WriterGroup
from diarylab.experiments.kinds.friends.outcomes import (
    card_outcomes,
    per_card,
    select,
    writer_outcomes,
)
from diarylab.testing.friends_synthetic import letters

CONTAGION = OutcomeContrast(
    kind="outcome",
    score="social_isolation",
    of=WriterGroup(writer="other", friend="si"),
    against=WriterGroup(writer="other", friend="fixed"),
)


def test_outcome_uses_letters_two_and_three_only():
    table = letters({"j": 10.0}, noise=0.0, first_letter=1000.0)
    outcomes = writer_outcomes(table, [2, 3])
    assert set(outcomes["n_letters"]) == {2}
    contagion = outcomes[outcomes["friend_profile"] == "si"]["outcome"]
    assert contagion.tolist() == pytest.approx([50.0] * 8)  # the first letter's 1000 is ignored
    assert all(not i.endswith(".A1") for ids in outcomes["sources"] for i in ids)
    with_first = writer_outcomes(table, [1, 2, 3])
    assert with_first["outcome"].max() > 300  # the same table, letter 1 included, differs


def test_unreadable_scores_are_missing_not_zero():
    table = letters({"j": 10.0}, noise=0.0)
    two = table["letter_id"].str.endswith(".A2")
    table.loc[two, "readable"] = False
    table.loc[two, "value"] = math.nan
    outcomes = writer_outcomes(table, [2, 3])
    assert set(outcomes["n_letters"]) == {1}
    assert outcomes[outcomes["friend_profile"] == "si"]["outcome"].tolist() == [50.0] * 8


def test_per_card_contrast_and_groups():
    outcomes = writer_outcomes(letters({"j": 10.0}, noise=0.0), [2, 3])
    cards = per_card(CONTAGION, outcomes, "j")
    assert len(cards) == 8 and cards["diff"].tolist() == pytest.approx([10.0] * 8)
    assert set(cards["n_of"]) == {1} and set(cards["n_against"]) == {1}
    # "other": writers steered toward another pattern than the score's. An entitlement writer
    # counts for a social-isolation score, not for an entitlement score.
    other = WriterGroup(writer="other", friend="si")
    assert select(outcomes, other, "social_isolation").sum() == 8
    assert select(outcomes, other, "entitlement").sum() == 0
    assert select(outcomes, WriterGroup(writer="steered", friend="steered"), "x").sum() == 8
    assert per_card(CONTAGION, outcomes, "no-such-judge").empty


def test_card_outcomes_is_one_row_per_card_and_group():
    outcomes = writer_outcomes(letters({"j": 10.0, "k": 0.0}), [2, 3])
    table = card_outcomes(outcomes)
    assert len(table) == 2 * 8 * 2  # judges × cards × writer groups (one score)
    assert set(table["writers"]) == {1}


def test_the_outcome_table_shows_cards_expected_beside_those_present():
    """A writer group that lost a card's letters (unreadable) says "7 of 8" in the report."""
    from diarylab.experiments.analysis.bootstrap import BootstrapSettings
    from diarylab.experiments.kinds.friends.describe import versus_controls
    from diarylab.experiments.kinds.friends.report import _cards

    table = letters({"j": 10.0})
    lost = (table["letter_id"].str.startswith("si.amara")) & (table["letter_index"] >= 2)
    table.loc[lost, "readable"] = False
    outcomes = writer_outcomes(table, [2, 3])
    found = versus_controls(outcomes, BootstrapSettings("card", resamples=50, seed=1))
    assert (found["n_cards_expected"] == 8).all()
    counts = {(r.friend_profile, r.n_cards) for r in found.itertuples()}
    assert any(n == 7 for _, n in counts) and any(n == 8 for _, n in counts)
    shown = {_cards(row) for _, row in found.iterrows()}
    assert shown == {"7 of 8", "8"}
