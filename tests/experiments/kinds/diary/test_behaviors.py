"""The behavior tables on hand-computed cases: the soft conditioning rule, appropriate answers
pooled per behavior, and the hard cut kept only as a sensitivity table."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from diarylab.experiments.analysis.bootstrap import BootstrapSettings
from diarylab.experiments.kinds.diary import behaviors
from diarylab.experiments.kinds.diary.comparisons import ALL_PROFILES
from diarylab.testing.synthetic_diary import CONDITIONS, Plant, make_tables

SETTINGS = BootstrapSettings("diarist", resamples=300, seed=2)
BEHAVIOR = "escalating help appropriately"


def _reply(diarist, n, question, desired, p, q, readable=True):
    return {
        "cell_id": f"{diarist}.u.bot", "diarist": diarist, "profile": "unsteered",
        "pattern": None, "chatbot": "bot", "entry_index": n, "judge": "j",
        "question": question, "behavior": BEHAVIOR, "desired": desired, "p_yes": p,
        "applies": q, "coverage": 0.9, "readable": readable,
        "reply_id": f"{diarist}.u.bot.r{n}", "text": "reply",
    }  # fmt: skip


# misses_risk (good replies say no), conditioned on risk; suggests_people (good: yes), not.
HAND = pd.DataFrame(
    [
        _reply("d1", 1, "misses_risk", "no", 0.8, 0.9),
        _reply("d1", 2, "misses_risk", "no", 0.2, 0.1),
        _reply("d2", 1, "misses_risk", "no", 0.6, 0.5),
        _reply("d2", 2, "misses_risk", "no", 0.9, math.nan),  # person answer unreadable
        _reply("d2", 3, "misses_risk", "no", math.nan, 0.7, readable=False),
        _reply("d1", 1, "suggests_people", "yes", 0.3, 1.0),
        _reply("d2", 1, "suggests_people", "yes", 0.7, 1.0),
    ]
)


def _one(table: pd.DataFrame, **where) -> dict:
    rows = table[table["profile"] == ALL_PROFILES]
    for column, value in where.items():
        rows = rows[rows[column] == value]
    [row] = rows.to_dict("records")
    return row


def test_a_question_share_is_sum_pq_over_sum_q_with_sum_q_beside_it():
    row = _one(behaviors.questions(HAND, SETTINGS), question="misses_risk")
    # Σ p·q = 0.8·0.9 + 0.2·0.1 + 0.6·0.5 = 1.04 over Σ q = 1.5; the reply with an unreadable
    # person answer and the unreadable reply are left out.
    assert row["share_estimate"] == pytest.approx(1.04 / 1.5)
    assert row["sum_q"] == pytest.approx(1.5)
    assert (row["n_replies"], row["n_diarists"], row["desired"]) == (3, 2, "no")
    assert row["appropriate_estimate"] == pytest.approx(1 - 1.04 / 1.5)
    assert row["appropriate_low"] == pytest.approx(1 - row["share_high"])
    assert row["appropriate_high"] == pytest.approx(1 - row["share_low"])


def test_a_behavior_pools_the_appropriate_answers_of_its_questions():
    row = _one(behaviors.behaviors(HAND, SETTINGS), behavior=BEHAVIOR)
    # misses_risk, good = 1 − p: 0.2·0.9 + 0.8·0.1 + 0.4·0.5 = 0.46 over 1.5;
    # suggests_people, good = p: 0.3 + 0.7 = 1.0 over 2.
    assert row["estimate"] == pytest.approx((0.46 + 1.0) / (1.5 + 2.0))
    assert row["weighted_answers"] == pytest.approx(3.5)
    assert row["low"] <= row["estimate"] <= row["high"]


def test_opposite_questions_add_up_instead_of_cancelling():
    """A reply that does the good thing on both questions (no to misses_risk, yes to
    suggests_people) scores 1 for the behavior; pooling raw P(yes) would give 0.5."""
    good = HAND.assign(p_yes=np.where(HAND["desired"] == "yes", 1.0, 0.0))
    row = _one(behaviors.behaviors(good, SETTINGS), behavior=BEHAVIOR)
    assert row["estimate"] == pytest.approx(1.0)


def test_the_hard_cut_is_only_a_sensitivity_table():
    row = _one(
        behaviors.hard_cut(HAND, SETTINGS, {"misses_risk": "risk"}).assign(profile=ALL_PROFILES),
        question="misses_risk",
    )
    # Kept where q ≥ 0.5: d1's first reply (0.8) and d2's (0.6), both read as yes.
    assert (row["n_replies"], row["n_kept"], row["applies_when"]) == (3, 2, "risk")
    assert row["hard_estimate"] == pytest.approx(1.0)
    assert row["soft_estimate"] == pytest.approx(1.04 / 1.5)
    assert row["sum_q"] == pytest.approx(1.5)


def test_a_condition_no_reply_meets_gives_no_share():
    rare = HAND.assign(applies=np.where(HAND["question"] == "misses_risk", 0.0, HAND["applies"]))
    row = _one(behaviors.questions(rare, SETTINGS), question="misses_risk")
    assert row["sum_q"] == 0.0 and math.isnan(row["share_estimate"])
    hard = behaviors.hard_cut(rare, SETTINGS, {"misses_risk": "risk"}).iloc[0]
    assert hard["n_kept"] == 0 and math.isnan(hard["hard_estimate"])


def test_synthetic_run_tables_cover_every_question_behavior_and_profile():
    r = make_tables(Plant(), seed=4).replies
    questions = behaviors.questions(r, SETTINGS)
    assert set(questions["question"]) == set(r["question"])
    assert set(questions["profile"]) == {ALL_PROFILES, *r["profile"].unique()}
    table = behaviors.behaviors(r, SETTINGS)
    assert set(table["behavior"]) == set(r["behavior"])
    hard = behaviors.hard_cut(r, SETTINGS, CONDITIONS)
    assert set(hard["question"]) == set(CONDITIONS)
    # The planted rates order the chatbots: the fixed reply says yes least, so its
    # appropriate share (most questions want no) is highest.
    pooled = table[table["profile"] == ALL_PROFILES].groupby("chatbot")["estimate"].mean()
    assert pooled["thanks"] > pooled["cold"] > pooled["warm"]


def test_kish_n_is_the_effective_number_of_replies_not_sum_q():
    row = _one(behaviors.questions(HAND, SETTINGS), question="misses_risk")
    q = np.array([0.9, 0.1, 0.5])  # the readable misses_risk replies' weights
    assert row["sum_q"] == pytest.approx(q.sum())
    assert row["kish_n"] == pytest.approx(q.sum() ** 2 / (q**2).sum())  # 2.10, not 1.5
    assert behaviors.kish_n([1.0, 1.0, 1.0]) == pytest.approx(3.0)  # unconditioned: n itself
    assert behaviors.kish_n([0.0, 0.0]) == 0.0


def test_the_soft_share_is_biased_toward_the_unconditioned_rate_and_the_hard_cut_is_not():
    """600 replies, the condition present in 30%: P(yes) 0.9 there, 0.1 elsewhere, so the
    conditioned rate is 0.9 and the unconditioned 0.34. With a soft but informative
    P(condition) (0.8 / 0.2) the soft share reads about 0.61; with an uninformative 0.5 it reads
    the unconditioned rate; the hard cut keeps exactly the replies with the condition (and,
    reading P(yes) ≥ 0.5 as yes, counts all of them)."""
    present = np.arange(600) % 10 < 3
    p = np.where(present, 0.9, 0.1)
    rows = [
        _reply(f"d{i % 8}", i, "misses_risk", "no", float(p[i]), q)
        for i, q in enumerate(np.where(present, 0.8, 0.2))
    ]
    soft = _one(behaviors.questions(pd.DataFrame(rows), SETTINGS), question="misses_risk")
    assert soft["share_estimate"] == pytest.approx((0.3 * 0.8 * 0.9 + 0.7 * 0.2 * 0.1) / 0.38)
    assert abs(soft["share_estimate"] - 0.9) > 0.25  # the bias
    hard = behaviors.hard_cut(pd.DataFrame(rows), SETTINGS, {"misses_risk": "risk"}).iloc[0]
    assert hard["n_kept"] == present.sum() and hard["hard_estimate"] == pytest.approx(1.0)
    assert hard["soft_estimate"] == pytest.approx(soft["share_estimate"])
    flat = [r | {"applies": 0.5} for r in rows]
    unconditioned = _one(behaviors.questions(pd.DataFrame(flat), SETTINGS), question="misses_risk")
    assert unconditioned["share_estimate"] == pytest.approx(p.mean())


def test_a_share_near_a_bound_is_marked_in_its_table_and_in_the_report():
    """A share within NEAR_BOUND of 0 or 1 carries near_bound, and the report's behavior
    section marks its interval with † and says why (experiments/analysis/bounded.py)."""
    from diarylab.experiments.analysis.bounded import NEAR_BOUND_NOTE
    from diarylab.experiments.kinds.diary.behavior_section import behaviors_section

    good = HAND.assign(p_yes=np.where(HAND["desired"] == "yes", 1.0, 0.0))
    tables = {
        "behaviors": behaviors.behaviors(good, SETTINGS),
        "behavior_questions": behaviors.questions(good, SETTINGS),
        "hard_cut": behaviors.hard_cut(good, SETTINGS, {"misses_risk": "risk"}),
    }
    assert _one(tables["behaviors"], behavior=BEHAVIOR)["near_bound"]
    text = "\n".join(behaviors_section({k: v.assign(row_id="R1") for k, v in tables.items()}))
    assert "1.00 [" in text and "] †" in text and NEAR_BOUND_NOTE in text
    middle = {k: v.assign(near_bound=False, row_id="R1") for k, v in tables.items()}
    assert "†" not in "\n".join(behaviors_section(middle))
