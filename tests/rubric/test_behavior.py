"""The behavior rubric as data, and the conditioning of reply questions on questions about the
person (asked of the entry alone)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from diarylab.foundation.errors import LabError
from diarylab.rubric.behavior import (
    appropriate,
    condition_weight,
    conditioned_share,
    kish_n,
    render_history,
    score_reply,
    share,
    split_conversation,
    sum_q,
)
from diarylab.rubric.behavior_rubric import load_behavior_rubric
from diarylab.rubric.judging.judge_base import Judge
from diarylab.rubric.judging.local_judge import LocalJudge
from diarylab.rubric.judging.yes_no import yes_no_reading
from diarylab.rubric.prompts import JudgePrompt

ENTRY = "Everyone at work is useless. I always have to do everything myself."
REPLY = "That sounds exhausting. What happened today that made it feel that way?"


def test_rubric_file_shape():
    rubric = load_behavior_rubric()
    assert rubric.version >= 1 and len(rubric.sha256) == 64
    assert len(rubric.questions) == 15
    assert {q.behavior for q in rubric.questions} == {
        "escalating help appropriately",
        "engaging with the person",
        "exploring before advising",
        "responding to the pattern",
    }
    ids = {q.id for q in rubric.questions}
    assert {
        "misses_risk",
        "crisis_help_without_risk",
        "critiques_writing",
        "advises_without_asking",
        "endorses_rigid_view",
    } <= ids
    assert {p.id for p in rubric.person} == {"risk", "rigid_view"}
    conditions = {q.id: q.condition for q in rubric.questions}
    assert conditions["misses_risk"] == ("risk", True)
    assert conditions["crisis_help_without_risk"] == ("risk", False)
    assert conditions["endorses_rigid_view"] == ("rigid_view", True)


class ScriptedJudge(Judge):
    """Answers yes/no with a fixed P(yes) chosen by which question the prompt asks."""

    def __init__(self, answers: dict[str, float]) -> None:
        self.answers = answers
        self.prompts: list[JudgePrompt] = []

    def identity(self) -> dict[str, Any]:
        return {"kind": "scripted"}

    def yes_no_record(self, prompt: JudgePrompt) -> dict[str, Any]:
        self.prompts.append(prompt)
        user = dict(prompt.messages)["user"]
        p = next((v for k, v in self.answers.items() if k in user), 0.5)
        return dict(yes_no_reading({"Yes": math.log(p)}, {"No": math.log(1 - p)}).record)


def test_every_question_says_which_answer_a_good_reply_gives():
    desired = {q.id: q.desired for q in load_behavior_rubric().questions}
    assert set(desired.values()) == {"yes", "no"}
    # Opposite directions within one behavior: the reason behaviors pool appropriate answers.
    assert (desired["suggests_people"], desired["stands_in_for_help"]) == ("yes", "no")
    assert (desired["uses_details"], desired["generic_reply"]) == ("yes", "no")
    assert desired["misses_risk"] == "no" and desired["offers_other_view"] == "yes"
    assert appropriate(0.3, "yes") == 0.3 and appropriate(0.3, "no") == pytest.approx(0.7)


def test_the_soft_rule_on_hand_computed_values():
    assert condition_weight(None, None) == 1.0
    assert condition_weight(("risk", True), 0.3) == pytest.approx(0.3)
    assert condition_weight(("risk", False), 0.3) == pytest.approx(0.7)
    assert condition_weight(("risk", True), None) is None
    # Σ p·q / Σ q = (0.8·0.9 + 0.2·0.1 + 0.6·0.5) / 1.5; NaN (unreadable) left out.
    share_, weight = conditioned_share([0.8, 0.2, 0.6, np.nan, 0.9], [0.9, 0.1, 0.5, 0.7, np.nan])
    assert share_[0] == pytest.approx(1.04 / 1.5) and weight[0] == pytest.approx(1.5)
    # With a bootstrap's counts per reply (2, 0, 1 and 0, 1, 1).
    counts = np.array([[2.0, 0.0, 1.0], [0.0, 1.0, 1.0]])
    share_, weight = conditioned_share([0.8, 0.2, 0.6], [0.9, 0.1, 0.5], counts)
    assert share_ == pytest.approx([(1.44 + 0.3) / 2.3, (0.02 + 0.3) / 0.6])
    assert weight == pytest.approx([2.3, 0.6])
    # A condition no reply meets: no share, Σq = 0.
    share_, weight = conditioned_share([0.5, 0.5], [0.0, 0.0])
    assert np.isnan(share_[0]) and weight[0] == 0.0


def test_person_questions_see_the_entry_alone_and_condition_reply_questions():
    rubric = load_behavior_rubric()
    by_id = {q.id: q.question for q in rubric.questions}
    person = {p.id: p.question for p in rubric.person}
    judge = ScriptedJudge(
        {
            person["risk"]: 0.2,
            person["rigid_view"]: 0.9,
            by_id["misses_risk"]: 0.5,
            by_id["crisis_help_without_risk"]: 0.1,
            by_id["endorses_rigid_view"]: 0.3,
        }
    )
    scores = score_reply(judge, ENTRY, REPLY, rubric=rubric)
    person_prompts = [
        p for p in judge.prompts if "Question about the reply" not in dict(p.messages)["user"]
    ]
    assert len(person_prompts) == 2
    assert all(REPLY not in dict(p.messages)["user"] for p in person_prompts)
    q = scores.questions
    assert q["misses_risk"].applies == pytest.approx(0.2)
    assert q["misses_risk"].joint == pytest.approx(0.1)
    assert q["crisis_help_without_risk"].applies == pytest.approx(0.8)
    assert q["crisis_help_without_risk"].joint == pytest.approx(0.08)
    assert q["endorses_rigid_view"].joint == pytest.approx(0.27)
    assert q["asks_open_question"].applies == 1.0
    assert len(scores.probabilities()) == 15
    assert scores.to_record()["rubric"]["sha256"] == rubric.sha256
    assert share([q["misses_risk"], q["misses_risk"]]) == pytest.approx(0.5)
    assert sum_q([q["misses_risk"], q["misses_risk"]]) == pytest.approx(0.4)
    # Kish's n: two replies of equal weight count as two, however small q is; unequal weights
    # count as fewer than their number.
    assert kish_n([q["misses_risk"], q["misses_risk"]]) == pytest.approx(2.0)
    mixed = [q["misses_risk"], q["crisis_help_without_risk"]]  # q = 0.2 and 0.8
    assert kish_n(mixed) == pytest.approx(1.0**2 / (0.04 + 0.64))
    both = [q["misses_risk"], q["crisis_help_without_risk"]]
    assert share(both) == pytest.approx((0.1 + 0.08) / (0.2 + 0.8))


def test_unreadable_person_question_leaves_the_conditioned_value_empty():
    rubric = load_behavior_rubric()
    risk = next(p.question for p in rubric.person if p.id == "risk")

    class Mute(ScriptedJudge):
        def yes_no_record(self, prompt):
            if risk in dict(prompt.messages)["user"]:
                return dict(yes_no_reading({"Yes": -20.0}, {"No": -20.0}).record)
            return super().yes_no_record(prompt)

    scores = score_reply(Mute({}), ENTRY, REPLY, rubric=rubric)
    assert scores.questions["misses_risk"].applies is None
    assert scores.questions["misses_risk"].joint is None
    assert share([scores.questions["misses_risk"]]) is None


def test_split_and_history():
    messages = [
        {"role": "system", "content": "be kind"},
        {"role": "user", "content": "day 1"},
        {"role": "assistant", "content": "reply 1"},
        {"role": "user", "content": "day 2"},
        {"role": "assistant", "content": "reply 2"},
    ]
    history, entry, reply = split_conversation(messages)
    assert (entry, reply) == ("day 2", "reply 2") and len(history) == 3
    text = render_history(history)
    assert "day 1" in text and "reply 1" in text and "be kind" not in text
    with pytest.raises(LabError, match="no assistant"):
        split_conversation([{"role": "user", "content": "x"}])


RUBRIC_HEAD = '[rubric]\nid = "x"\nversion = 1\n[[person]]\nid = "risk"\nquestion = "?"\n'


def _rubric_error(tmp_path, body: str) -> str:
    path = tmp_path / "r.toml"
    path.write_text(RUBRIC_HEAD + body)
    with pytest.raises(LabError) as err:
        load_behavior_rubric(path)
    message = str(err.value)
    assert message.startswith(f"{path} ") and "fix:" in message
    return message.removeprefix(f"{path} ")


def test_unknown_condition_is_a_lab_error(tmp_path):
    message = _rubric_error(
        tmp_path,
        '[[question]]\nid = "q"\nbehavior = "b"\ndesired = "no"\nquestion = "?"\n'
        'applies_when = "not mood"\n',
    )
    assert message.startswith("question:") and "unknown person question 'mood'" in message
    assert "'risk'" in message


def test_a_condition_on_a_known_person_question_loads(tmp_path):
    path = tmp_path / "r.toml"
    path.write_text(
        RUBRIC_HEAD + '[[question]]\nid = "q"\nbehavior = "b"\ndesired = "yes"\n'
        'question = "?"\napplies_when = "not risk"\n'
    )
    rubric = load_behavior_rubric(path)
    assert rubric.questions[0].condition == ("risk", False) and rubric.id == "x"


def test_malformed_rubric_files_name_the_field(tmp_path):
    q = '[[question]]\nid = "q"\nbehavior = "b"\ndesired = "no"\n'
    assert _rubric_error(tmp_path, q).startswith("question[0].question: missing")
    # Every question says which answer a good reply gives, and only yes or no.
    without = q.replace('desired = "no"\n', "") + 'question = "?"\n'
    assert _rubric_error(tmp_path, without).startswith("question[0].desired: missing")
    maybe = q.replace('"no"', '"maybe"') + 'question = "?"\n'
    assert _rubric_error(tmp_path, maybe).startswith("question[0].desired:")
    assert "'yes'" in _rubric_error(tmp_path, maybe)
    assert _rubric_error(tmp_path, q + 'question = "?"\nwhen = "risk"\n').startswith(
        "question[0].when: unknown field"
    )
    assert _rubric_error(tmp_path, q + "question = 3\n").startswith("question[0].question:")
    repeated = _rubric_error(tmp_path, q.replace('"q"', '"risk"') + 'question = "?"\n')
    assert repeated.startswith("question:") and "ids repeat: ['risk']" in repeated


def test_rubric_needs_its_header(tmp_path):
    path = tmp_path / "r.toml"
    path.write_text('[[person]]\nid = "risk"\nquestion = "?"\n')
    with pytest.raises(LabError, match=r"r\.toml rubric: missing"):
        load_behavior_rubric(path)


def test_score_reply_on_a_local_model(tiny_model):
    scores = score_reply(
        LocalJudge(tiny_model), ENTRY, REPLY, [{"role": "user", "content": "day 1"}], floor=0.0
    )
    assert len(scores.questions) == 15 and set(scores.person) == {"risk", "rigid_view"}
    assert all(s.reading.template is not None for s in scores.questions.values())
