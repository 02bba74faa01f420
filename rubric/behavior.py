"""The behavior rubric (rubric/behavior_rubric.toml): yes/no questions about a chatbot's reply to
a diary entry, plus questions about the person asked of the entry alone.

Conditioning (decided in code, not in the prompt), one rule for the CLI and the report: a reply
question with applies_when = "X" (or "not X") gets the weight q = P(yes) (or 1 − P(yes)) of
person question X (`condition_weight`); other questions have q = 1. Each QuestionScore keeps
p_yes (the reply question, always asked), applies (= q) and joint = p_yes × q. Over replies the
share is Σ p·q / Σ q and Σ q is the effective number of replies it rests on
(`conditioned_share`). If either reading is unreadable the reply drops out of that question.

Each question names the answer a good reply gives (`desired`); `appropriate` turns P(yes) into
the probability of that answer, so a behavior's questions can be pooled."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from diarylab.foundation.errors import LabError
from diarylab.rubric.behavior_rubric import BehaviorRubric, ReplyQuestion, load_behavior_rubric
from diarylab.rubric.judging.expected import DEFAULT_FLOOR
from diarylab.rubric.judging.judge_base import Judge
from diarylab.rubric.judging.yes_no import YesNoReading
from diarylab.rubric.prompts import JudgePrompt, Template, TemplateRef, load_template

Message = Mapping[str, str]


@dataclass(frozen=True)
class QuestionScore:
    id: str
    behavior: str
    reading: YesNoReading
    applies: float | None  # weight from the person question; 1.0 if unconditioned
    joint: float | None  # p_yes × applies; None if either is unreadable

    @property
    def p_yes(self) -> float | None:
        return self.reading.p_yes


@dataclass(frozen=True)
class ReplyScores:
    rubric: TemplateRef
    person: Mapping[str, YesNoReading]
    questions: Mapping[str, QuestionScore]

    def probabilities(self) -> dict[str, float | None]:
        return {k: q.p_yes for k, q in self.questions.items()}

    def to_record(self) -> dict[str, Any]:
        return {
            "rubric": self.rubric.to_record(),
            "person": {k: r.to_record() for k, r in self.person.items()},
            "questions": {
                k: {
                    "behavior": q.behavior,
                    "applies": q.applies,
                    "joint": q.joint,
                    "reading": q.reading.to_record(),
                }
                for k, q in self.questions.items()
            },
        }


def condition_weight(
    condition: tuple[str, bool] | None, person_p_yes: float | None
) -> float | None:
    """q, the weight a reply gets in a conditioned question's share: P(yes) of the person
    question (1 − P(yes) for "not X"); 1 without a condition; None if the person answer is
    unreadable (the reply then drops out of that question)."""
    if condition is None:
        return 1.0
    if person_p_yes is None or not np.isfinite(person_p_yes):
        return None
    return float(person_p_yes) if condition[1] else 1.0 - float(person_p_yes)


def conditioned_share(
    p_yes: Sequence[float] | np.ndarray,
    applies: Sequence[float] | np.ndarray,
    resamples: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """The soft rule: share = Σ p·q / Σ q over replies, and Σ q, the effective number of replies.

    `p_yes` and `applies` (q) are per reply, NaN where unreadable (left out). `resamples` is an
    optional (k × replies) matrix of how often each reply counts (a cluster bootstrap's
    weights); without it every reply counts once (k = 1). Returns (share, effective replies),
    each of length k; share is NaN where Σ q = 0."""
    p = np.asarray(p_yes, dtype=float)
    q = np.asarray(applies, dtype=float)
    weights = np.ones((1, p.size)) if resamples is None else np.asarray(resamples, dtype=float)
    keep = np.isfinite(p) & np.isfinite(q)
    w, p, q = weights[:, keep], p[keep], q[keep]
    effective = w @ q
    with np.errstate(invalid="ignore", divide="ignore"):
        share = np.where(effective > 0, (w @ (p * q)) / effective, np.nan)
    return np.asarray(share, dtype=float), np.asarray(effective, dtype=float)


def share(scores: Iterable[QuestionScore]) -> float | None:
    """The conditioned share of replies showing a behavior (`conditioned_share` on scores)."""
    kept = [s for s in scores if s.joint is not None and s.applies is not None]
    p_yes = [s.p_yes if s.p_yes is not None else np.nan for s in kept]
    value, _ = conditioned_share(p_yes, [s.applies or 0.0 for s in kept])
    return float(value[0]) if np.isfinite(value[0]) else None


def condition_weights(scores: Iterable[QuestionScore]) -> list[float]:
    """The q of every readable score: the weights of a conditioned share."""
    return [float(s.applies) for s in scores if s.joint is not None and s.applies is not None]


def sum_q(scores: Iterable[QuestionScore]) -> float:
    """Σ q over the readable scores: the expected number of replies the condition applies to
    (not an effective sample size: that is kish_n)."""
    return float(sum(condition_weights(scores)))


def kish_n(scores: Iterable[QuestionScore]) -> float:
    """Kish's effective number of replies behind a share weighted by q: (Σq)² / Σq²."""
    q = condition_weights(scores)
    squares = sum(w * w for w in q)
    return float(sum(q) ** 2 / squares) if squares > 0 else 0.0


def appropriate(p_yes: float | np.ndarray, desired: str) -> float | np.ndarray:
    """The probability of the desired answer: P(yes) where yes is desired, else 1 − P(yes)."""
    return p_yes if desired == "yes" else 1.0 - p_yes


def render_history(conversation: Sequence[Message], template: Template | None = None) -> str:
    """Earlier entries and replies, as context above the latest exchange, worded by the reply
    template's history_* texts (system messages are the chatbot's set-up, not part of what the
    person and the chatbot said)."""
    template = template or load_template("reply_question")
    shapes = {"user": template.part("history_entry"), "assistant": template.part("history_reply")}
    parts = [
        shapes[m["role"]].format(text=m["content"]) for m in conversation if m.get("role") in shapes
    ]
    if not parts:
        return ""
    return template.part("history_intro").format(exchanges="\n\n".join(parts))


def split_conversation(messages: Sequence[Message]) -> tuple[list[Message], str, str]:
    """(history before the entry, entry, reply): the reply is the last assistant message, the
    entry the last user message before it."""
    reply_at = max(
        (i for i, m in enumerate(messages) if m.get("role") == "assistant"), default=None
    )
    if reply_at is None:
        raise LabError(
            "the conversation has no assistant message (the reply)",
            where="conversation",
            fix="end it with the chatbot's reply",
        )
    entry_at = max(
        (i for i, m in enumerate(messages[:reply_at]) if m.get("role") == "user"), default=None
    )
    if entry_at is None:
        raise LabError(
            "no user message (the entry) before the last reply",
            where="conversation",
            fix="put the diary entry as a user message before the chatbot's reply",
        )
    return list(messages[:entry_at]), messages[entry_at]["content"], messages[reply_at]["content"]


def reply_prompts(
    entry_text: str,
    reply_text: str,
    conversation: Sequence[Message],
    rubric: BehaviorRubric,
    person_template: Template,
    reply_template: Template,
) -> tuple[dict[str, JudgePrompt], dict[str, JudgePrompt]]:
    person = {
        p.id: person_template.prompt(entry=entry_text, question=p.question) for p in rubric.person
    }
    history = render_history(conversation, reply_template)
    reply = {
        q.id: reply_template.prompt(
            history=history, entry=entry_text, reply=reply_text, question=q.question
        )
        for q in rubric.questions
    }
    return person, reply


def score_reply(
    judge: Judge,
    entry_text: str,
    reply_text: str,
    conversation: Sequence[Message] = (),
    *,
    floor: float = DEFAULT_FLOOR,
    rubric: BehaviorRubric | None = None,
) -> ReplyScores:
    """`conversation`: the exchanges before this entry (earlier entries and replies)."""
    rubric = rubric or load_behavior_rubric()
    person_t, reply_t = load_template("person_question"), load_template("reply_question")
    person_p, reply_p = reply_prompts(
        entry_text, reply_text, conversation, rubric, person_t, reply_t
    )
    person = {
        k: replace(r, template=person_t.ref)
        for k, r in zip(
            person_p, judge.read_yes_nos(list(person_p.values()), floor=floor), strict=True
        )
    }
    answers = judge.read_yes_nos(list(reply_p.values()), floor=floor)
    questions = {}
    for q, reading in zip(rubric.questions, answers, strict=True):
        applies = _applies(q, person)
        joint = None if applies is None or reading.p_yes is None else reading.p_yes * applies
        questions[q.id] = QuestionScore(
            q.id, q.behavior, replace(reading, template=reply_t.ref), applies, joint
        )
    return ReplyScores(rubric.ref, person, questions)


def _applies(q: ReplyQuestion, person: Mapping[str, YesNoReading]) -> float | None:
    cond = q.condition
    return condition_weight(cond, None if cond is None else person[cond[0]].p_yes)
