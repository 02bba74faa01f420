"""Verdicts of friends hypotheses on synthetic data: the sign-flip test per judge over role
cards, Holm across the design's hypotheses per judge, and the both-judges rule — supported (or
contradicted) only when every listed judge says so."""

from __future__ import annotations

import pytest

from diarylab.experiments.analysis.verdicts import holm
from diarylab.experiments.kinds.friends.contrast import FriendsHypothesis
from diarylab.experiments.kinds.friends.outcomes import writer_outcomes
from diarylab.experiments.kinds.friends.verdicts import evaluate, results_table
from diarylab.testing.friends_synthetic import CARDS, letters


def hypothesis(hid: str, direction: str = "greater", judges=("a", "b")) -> FriendsHypothesis:
    return FriendsHypothesis.model_validate(
        {
            "id": hid,
            "says": "a lonely friend spreads loneliness",
            "direction": direction,
            "judges": list(judges),
            "contrast": {
                "kind": "outcome",
                "score": "social_isolation",
                "of": {"writer": "other", "friend": "si"},
                "against": {"writer": "other", "friend": "fixed"},
            },
        }
    )


def outcomes(effects, cards=CARDS):
    return writer_outcomes(letters(effects, cards=cards), [2, 3])


def test_both_judges_agreeing_support_it():
    (result,) = evaluate([hypothesis("H1")], outcomes({"a": 8.0, "b": 6.0}))
    assert [j.verdict for j in result.verdicts] == ["supported", "supported"]
    assert result.overall == "supported"
    assert all(
        j.test.n == 8 and j.test.p_two_sided == pytest.approx(2 / 256) for j in result.verdicts
    )
    assert all(j.interval.low > 0 for j in result.verdicts)


def test_one_judge_alone_is_not_enough():
    (result,) = evaluate([hypothesis("H1")], outcomes({"a": 8.0, "b": 0.0}))
    assert [j.verdict for j in result.verdicts] == ["supported", "inconclusive"]
    assert result.overall == "inconclusive"


def test_the_wrong_direction_is_contradicted_and_disagreement_is_inconclusive():
    (down,) = evaluate([hypothesis("H1", "less")], outcomes({"a": 8.0, "b": 6.0}))
    assert down.overall == "contradicted"
    (split,) = evaluate([hypothesis("H1")], outcomes({"a": 8.0, "b": -8.0}))
    assert [j.verdict for j in split.verdicts] == ["supported", "contradicted"]
    assert split.overall == "inconclusive"


def test_too_few_cards_give_no_verdict():
    (result,) = evaluate([hypothesis("H1")], outcomes({"a": 8.0, "b": 8.0}, cards=CARDS[:5]))
    assert {j.verdict for j in result.verdicts} == {"too few"}
    assert result.overall == "too few"


def test_holm_is_applied_across_the_hypotheses_of_each_judge():
    hypotheses = [hypothesis("H1"), hypothesis("H2", judges=("a",)), hypothesis("H3", "less")]
    data = outcomes({"a": 8.0, "b": 0.5})
    results = evaluate(hypotheses, data)
    raw_a = [r.verdicts[0].test.p_two_sided for r in results]
    assert [r.verdicts[0].p_holm for r in results] == pytest.approx(list(holm(raw_a)))
    raw_b = [results[0].verdicts[1].test.p_two_sided, results[2].verdicts[1].test.p_two_sided]
    assert [results[0].verdicts[1].p_holm, results[2].verdicts[1].p_holm] == pytest.approx(
        list(holm(raw_b))
    )
    # Three tests of 2/256 each under judge a: Holm multiplies the smallest by 3, still < 0.05.
    assert results[0].verdicts[0].p_holm == pytest.approx(3 * 2 / 256)
    assert results[0].verdicts[0].verdict == "supported"
    assert results[2].verdicts[0].verdict == "contradicted"
    table = results_table(results)
    assert len(table) == 5 and list(table["id"]) == ["H1", "H1", "H2", "H3", "H3"]
    assert table["mde"].notna().all() and (table["p_holm"] >= table["p"]).all()
