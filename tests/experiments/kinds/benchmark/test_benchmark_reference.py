"""A HealthBench-format file with grades set by hand gives, through the store and the report's
own tables, the numbers worked out below by hand: overall and axis scores under both
conventions, and the tag scores (example tags, `axis:*`, `level:*`, `cluster:*`) as OpenAI's
reference (simple-evals healthbench_eval.py) computes them; an ungraded criterion is counted per
chatbot and the sensitivity counting it as not met keeps its conversation; the judge's written
verdicts are compared with the read probabilities."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from diarylab.experiments.engine.store import JudgmentRow, Store
from diarylab.experiments.kinds.benchmark.data import load_benchmark
from diarylab.experiments.kinds.benchmark.leaderboard import board
from diarylab.experiments.kinds.benchmark.report_grading import (
    ungraded_by_chatbot,
    verdict_agreement,
)
from diarylab.experiments.kinds.benchmark.rows import BenchReplyRow, GraderAnswerRow
from diarylab.experiments.kinds.benchmark.scoring import ungraded_as_not_met
from diarylab.experiments.kinds.benchmark.tables import graded_frame


def item(points, tags, met):
    return {"criterion": f"criterion worth {points}", "points": points, "tags": tags}, met


EX, CL = "level:example", "level:cluster"
# prompt id -> example tags, [(rubric item, met by hand)]
EXAMPLES = {
    "e1": (
        ["theme:emergency_referrals", "physician_agreed_category:x"],
        [
            item(5, [EX, "axis:accuracy"], True),
            item(3, [EX, "axis:completeness"], False),
            item(-2, [EX, "axis:accuracy"], True),
            item(4, [CL, "cluster:emergent_tp", "axis:completeness"], True),
        ],
    ),
    "e2": (
        ["theme:communication"],
        [
            item(6, [EX, "axis:communication"], False),
            item(-5, [EX, "axis:accuracy"], True),
            item(2, [CL, "cluster:context_seeking", "axis:context_awareness"], True),
        ],
    ),
    "e3": (
        ["theme:communication", "physician_agreed_category:x"],
        [
            item(4, [EX, "axis:accuracy"], True),
            item(4, [EX, "axis:completeness"], True),
            item(2, [CL, "cluster:context_seeking", "axis:context_awareness"], False),
        ],
    ),
}
# By hand. e1: (5 - 2 + 4) / 12 = 7/12; e2: (-5 + 2) / 8 = -3/8; e3: 8/10.
OVERALL_HB = (7 / 12 - 3 / 8 + 0.8) / 3  # the mean, then clipped (inside [0, 1] here)
OVERALL_MHB = (7 / 12 + 0 + 0.8) / 3  # each conversation clipped, then the mean
# Within the axis (HealthBench): met over the axis's own positive points, over the
# conversations that have some. accuracy: e1 (5 - 2)/5, e3 4/4 (e2 has no positive accuracy).
WITHIN = {
    "accuracy": (0.6 + 1.0) / 2,
    "completeness": (4 / 7 + 1.0) / 2,
    "communication": 0.0,
    "context_awareness": (1.0 + 0.0) / 2,
}
# Points contributed (MentalHealthBench): over the whole conversation's positive points.
CONTRIBUTED = {
    "accuracy": (3 / 12 - 5 / 8 + 4 / 10) / 3,
    "completeness": (4 / 12 + 0 + 4 / 10) / 3,
    "communication": 0.0,
    "context_awareness": (0 + 2 / 8 + 0) / 3,
}
TAGS = {
    ("example", "theme:emergency_referrals"): (7 / 12, 1),
    ("example", "theme:communication"): ((-3 / 8 + 0.8) / 2, 2),
    ("example", "physician_agreed_category:x"): ((7 / 12 + 0.8) / 2, 2),
    ("rubric", "axis:accuracy"): (WITHIN["accuracy"], 2),
    ("rubric", "axis:completeness"): (WITHIN["completeness"], 2),
    ("rubric", "axis:communication"): (0.0, 1),
    ("rubric", "axis:context_awareness"): (0.5, 2),
    # level:example: e1 (5 - 2)/8, e2 -5/6 (not clipped per conversation), e3 8/8.
    ("rubric", "level:example"): ((3 / 8 - 5 / 6 + 1.0) / 3, 3),
    ("rubric", "level:cluster"): ((1.0 + 1.0 + 0.0) / 3, 3),
    ("rubric", "cluster:emergent_tp"): (1.0, 1),
    ("rubric", "cluster:context_seeking"): (0.5, 2),
}


def write_file(folder: Path) -> Path:
    path = folder / "hb.jsonl"
    rows = [
        {
            "prompt_id": pid,
            "prompt": [{"role": "user", "content": f"question {pid}"}],
            "rubrics": [r for r, _ in items],
            "example_tags": tags,
        }
        for pid, (tags, items) in EXAMPLES.items()
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def graded_store(folder: Path, ungraded: set[str] = frozenset(), disagree: set[str] = frozenset()):
    """The store of a run whose judge 'j' graded chatbot 'bot' exactly as EXAMPLES says:
    criteria in `ungraded` have no judgment, those in `disagree` a written verdict opposite to
    the reading."""
    bench = load_benchmark(write_file(folder), "healthbench")
    store = Store(folder / "store.sqlite", (BenchReplyRow, GraderAnswerRow))
    for conv in bench.conversations:
        reply = f"{conv.id}.bot"
        store.put_rows(BenchReplyRow(reply, conv.id, "bot", conv.stratum, "a reply", None, None))
        for cr, (_, met) in zip(conv.criteria, EXAMPLES[conv.id][1], strict=True):
            key = f"criterion:{cr.id}"
            written = met != (cr.id in disagree)
            store.put_rows(
                GraderAnswerRow(f"j:{reply}:{key}:0", "j", reply, key, 0, "{}", written, "ok", "k")
            )
            if cr.id not in ungraded:
                p = 0.9 if met else 0.1
                store.put_rows(
                    JudgmentRow(f"{reply}:{key}", "reply", reply, "j", key, p, 1.0, True, None, "k")
                )
    return bench, store


def test_a_hand_graded_healthbench_file_gives_the_reference_numbers(tmp_path):
    bench, store = graded_store(tmp_path)
    graded = graded_frame(store, bench.conversations, ["j"])
    store.close()
    for convention, overall in (("healthbench", OVERALL_HB), ("mentalhealthbench", OVERALL_MHB)):
        [s] = board(graded, convention, "met", resamples=4000, seed=3).scores
        assert s.score == pytest.approx(overall)
        # Both axis conventions are computed whichever convention scores the overall.
        assert s.axes_within == pytest.approx(WITHIN)
        assert s.axes_contributed == pytest.approx(CONTRIBUTED)
        assert sum(s.axes_contributed.values()) == pytest.approx(OVERALL_HB)  # unclipped mean
        tags = {(t.level, t.tag): (t.score, t.n) for t in s.tags}
        assert tags.keys() == TAGS.keys()
        for key, (value, n) in TAGS.items():
            assert tags[key] == (pytest.approx(value), n), key
        # The reference's bootstrap std clips each resample's mean. theme:communication has two
        # conversations (-3/8, 0.8): resample means -3/8 → 0, 0.2125, 0.8 with P 1/4, 1/2, 1/4.
        means, probs = np.array([0.0, 0.2125, 0.8]), np.array([0.25, 0.5, 0.25])
        exact = np.sqrt(probs @ means**2 - (probs @ means) ** 2)
        std = {(t.level, t.tag): t.bootstrap_std for t in s.tags}
        assert std[("example", "theme:communication")] == pytest.approx(exact, rel=0.05)
        assert std[("example", "theme:emergency_referrals")] == 0.0  # one conversation


def test_ungraded_criteria_are_counted_and_the_sensitivity_keeps_their_conversation(tmp_path):
    # e3's context-seeking criterion (not met by hand) is never graded.
    bench, store = graded_store(tmp_path, ungraded={"e3#2"}, disagree={"e1#0", "e2#0"})
    graded = graded_frame(store, bench.conversations, ["j"])
    agreement = verdict_agreement(store, ["j"]).iloc[0]
    store.close()
    [primary] = board(graded, "healthbench", "met", resamples=200, seed=3).scores
    assert primary.scored == 2 and primary.score == pytest.approx((7 / 12 - 3 / 8) / 2)
    [counts] = ungraded_by_chatbot(graded).to_dict("records")
    assert counts["ungraded"] == 1 and counts["unreadable"] == 0 and counts["criteria"] == 10
    assert counts["conversations dropped for an ungraded criterion"] == 1
    [sensitive] = board(ungraded_as_not_met(graded), "healthbench", "met", 200, 3).scores
    assert sensitive.scored == 3 and sensitive.score == pytest.approx(OVERALL_HB)
    # Nine criteria have both a written verdict and a reading (e3#2 has no reading); read met:
    # 7 of 9. Two verdicts disagree (e1#0 written false, e2#0 written true): written met 7 of 9.
    assert agreement["criteria"] == 9 and agreement["agree"] == pytest.approx(7 / 9)
    assert agreement["read met"] == pytest.approx(7 / 9)
    assert agreement["written met"] == pytest.approx(7 / 9)
    chance = (7 / 9) ** 2 + (2 / 9) ** 2
    assert agreement["kappa"] == pytest.approx((7 / 9 - chance) / (1 - chance))  # 10/28
