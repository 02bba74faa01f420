"""The behavior rubric (rubric/behavior_rubric.toml): yes/no questions about a chatbot's reply to
a diary entry, plus questions about the person asked of the entry alone.

Conditioning (decided in code, not in the prompt): a reply question with applies_when = "X"
(or "not X") gets applies = P(yes) (or 1 − P(yes)) of person question X; other questions have
applies = 1. Each QuestionScore keeps p_yes (the reply question, always asked), applies, and
joint = p_yes × applies. Aggregate with share() = Σ joint / Σ applies. If either reading is
unreadable, joint is None and the reply drops out of that question's share."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from foundation.datafiles import field, file_sha256, load_toml, table
from foundation.errors import LabError
from rubric.expected import DEFAULT_FLOOR
from rubric.judge_base import Judge
from rubric.prompts import JudgePrompt, Template, TemplateRef, load_template
from rubric.yes_no import YesNoReading

RUBRIC_FILE = Path(__file__).parent / "behavior_rubric.toml"
Message = Mapping[str, str]


@dataclass(frozen=True)
class PersonQuestion:
    id: str
    question: str


@dataclass(frozen=True)
class ReplyQuestion:
    id: str
    behavior: str
    question: str
    applies_when: str | None = None  # "<person id>" or "not <person id>"

    @property
    def condition(self) -> tuple[str, bool] | None:
        """(person question id, whether 'yes' is the applicable answer)."""
        if self.applies_when is None:
            return None
        negated = self.applies_when.startswith("not ")
        return self.applies_when.removeprefix("not ").strip(), not negated


@dataclass(frozen=True)
class BehaviorRubric:
    id: str
    version: int
    sha256: str
    person: tuple[PersonQuestion, ...]
    questions: tuple[ReplyQuestion, ...]

    @property
    def ref(self) -> TemplateRef:
        return TemplateRef(self.id, self.version, self.sha256)


def load_behavior_rubric(path: Path = RUBRIC_FILE) -> BehaviorRubric:
    where = str(path)
    data = load_toml(path)
    meta = table(data, "rubric", where)
    person = tuple(
        PersonQuestion(
            field(p, "id", str, f"{where} [[person]]"),
            field(p, "question", str, f"{where} [[person]]"),
        )
        for p in data.get("person", [])
    )
    questions = []
    for q in data.get("question", []):
        at = f"{where} [[question]] {q.get('id', '?')}"
        questions.append(
            ReplyQuestion(
                id=field(q, "id", str, at),
                behavior=field(q, "behavior", str, at),
                question=field(q, "question", str, at),
                applies_when=field(q, "applies_when", str, at, default=None),
            )
        )
    rubric = BehaviorRubric(
        id=field(meta, "id", str, where),
        version=field(meta, "version", int, where),
        sha256=file_sha256(path),
        person=person,
        questions=tuple(questions),
    )
    _check(rubric, where)
    return rubric


def _check(rubric: BehaviorRubric, where: str) -> None:
    ids = [p.id for p in rubric.person] + [q.id for q in rubric.questions]
    if len(set(ids)) != len(ids):
        raise LabError(f"question ids repeat: {sorted(ids)}", where=where)
    person_ids = {p.id for p in rubric.person}
    for q in rubric.questions:
        cond = q.condition
        if cond is not None and cond[0] not in person_ids:
            raise LabError(
                f"question {q.id!r}: applies_when names unknown person question {cond[0]!r}",
                where=where,
                fix=f"use one of {sorted(person_ids)}, optionally after 'not '",
            )


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


def share(scores: Iterable[QuestionScore]) -> float | None:
    """The applicability-weighted share of replies showing a behavior."""
    pairs = [(s.joint, s.applies) for s in scores if s.joint is not None and s.applies is not None]
    weight = sum(a for _, a in pairs)
    return sum(j for j, _ in pairs) / weight if weight > 0 else None


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
        raise LabError("no user message (the entry) before the last reply", where="conversation")
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
    if cond is None:
        return 1.0
    p = person[cond[0]].p_yes
    if p is None:
        return None
    return p if cond[1] else 1.0 - p
