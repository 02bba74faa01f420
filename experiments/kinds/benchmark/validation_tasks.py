"""Grader validation, the judging side: the pool of borrowed criteria (a data file the lab
writes, with the behavior rubric's polarity), the yes/no questions a judge answers directly
(which pool criteria apply to a conversation; the behavior rubric's questions), and the
borrowed criteria each judge chose, graded like a reply's own criteria. The analysis is in
validation.py."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from functools import cache
from pathlib import Path

from pydantic import Field, model_validator

from diarylab.experiments.engine.store import Store
from diarylab.experiments.engine.tasks import Task
from diarylab.experiments.kinds.benchmark.data import Conversation, Criterion
from diarylab.experiments.kinds.benchmark.grader import Grader
from diarylab.experiments.kinds.benchmark.grading import Item
from diarylab.experiments.kinds.benchmark.schema import BenchmarkDesignFile
from diarylab.foundation.datafiles import DataModel, HashedDataFile, NonEmpty
from diarylab.rubric.behavior import reply_prompts
from diarylab.rubric.behavior_rubric import RUBRIC_FILE, load_behavior_rubric
from diarylab.rubric.prompts import TEMPLATES_DIR, JudgePrompt, TemplateRef, load_template

POOL_FILE = Path(__file__).parent / "borrowed_criteria.toml"
SELECT, BORROWED, PERSON, BEHAVIOR = (
    "borrowed-select:",
    "borrowed:",
    "behavior-person:",
    "behavior:",
)


class PoolHead(DataModel):
    id: NonEmpty
    version: int
    select_user: NonEmpty
    select_prefill: NonEmpty


class PoolCriterion(DataModel):
    text: NonEmpty
    points: int | float
    axis: NonEmpty


class Polarity(DataModel):
    good: list[NonEmpty]
    poor: list[NonEmpty]


class PoolFile(HashedDataFile):
    pool: PoolHead
    criterion: list[PoolCriterion] = Field(min_length=1)
    behavior_polarity: Polarity

    @model_validator(mode="after")
    def _every_question_once(self) -> PoolFile:
        listed = [*self.behavior_polarity.good, *self.behavior_polarity.poor]
        known = [q.id for q in load_behavior_rubric().questions]
        if sorted(listed) != sorted(known):
            raise ValueError(
                f"behavior_polarity must list each reply question of the behavior rubric once "
                f"(has {sorted(listed)}, the rubric {sorted(known)}) — fix: list every question "
                "under good or poor"
            )
        return self

    @property
    def ref(self) -> TemplateRef:
        return TemplateRef(self.pool.id, self.pool.version, self.sha256)

    def criteria(self) -> list[Criterion]:
        return [
            Criterion(f"pool#{i}", c.text, float(c.points), c.axis)
            for i, c in enumerate(self.criterion)
        ]


@cache
def load_pool(path: Path = POOL_FILE) -> PoolFile:
    return PoolFile.from_file(path)


def validation_files(spec: BenchmarkDesignFile) -> list[Path]:
    if not spec.benchmark.validation:
        return []
    templates = [TEMPLATES_DIR / "person_question.toml", TEMPLATES_DIR / "reply_question.toml"]
    return [POOL_FILE, RUBRIC_FILE, *templates]


def _user_blocks(conversation: Conversation) -> str:
    return "\n\n".join(f"{r}: {c}" for r, c in conversation.messages if r != "system")


def plain_tasks(
    spec: BenchmarkDesignFile,
    conversations: Sequence[Conversation],
    replies: Sequence[tuple[str, Conversation, str]],
) -> Iterator[Task]:
    """The yes/no questions a judge answers directly: which pool criteria apply to each
    conversation, and the behavior rubric's person and reply questions."""
    wanted = spec.benchmark.validation
    if "borrowed_criteria" in wanted:
        pool = load_pool()
        for conv in conversations:
            for c in pool.criteria():
                user = pool.pool.select_user.format(
                    conversation=_user_blocks(conv), criterion=f"[{c.points:g}] {c.text}"
                )
                prompt = JudgePrompt.chat(
                    [{"role": "user", "content": user}], pool.pool.select_prefill
                )
                yield Task(
                    "conversation",
                    conv.id,
                    SELECT + c.id,
                    "yes_no",
                    prompt,
                    pool.ref,
                    f"select:{conv.id}",
                )
    if "behavior_rubric" in wanted:
        rubric = load_behavior_rubric()
        person_t, reply_t = load_template("person_question"), load_template("reply_question")
        asked: set[str] = set()
        for reply_id, conv, text in replies:
            history = [{"role": r, "content": c} for r, c in conv.messages[:-1] if r != "system"]
            entry = conv.messages[-1][1]
            person, questions = reply_prompts(entry, text, history, rubric, person_t, reply_t)
            if conv.id not in asked:
                asked.add(conv.id)
                for qid, prompt in person.items():
                    yield Task(
                        "conversation",
                        conv.id,
                        PERSON + qid,
                        "yes_no",
                        prompt,
                        person_t.ref,
                        f"person:{conv.id}",
                    )
            for qid, prompt in questions.items():
                yield Task(
                    "reply",
                    reply_id,
                    BEHAVIOR + qid,
                    "yes_no",
                    prompt,
                    reply_t.ref,
                    f"behavior:{reply_id}",
                )


def plain_counts(spec: BenchmarkDesignFile, conversations: int, replies: int) -> int:
    """How many tasks plain_tasks yields for this many conversations and replies."""
    wanted = spec.benchmark.validation
    count = conversations * len(load_pool().criterion) if "borrowed_criteria" in wanted else 0
    if "behavior_rubric" in wanted:
        rubric = load_behavior_rubric()
        count += conversations * len(rubric.person) + replies * len(rubric.questions)
    return count


def applicable(store: Store, judge: str) -> dict[str, list[str]]:
    """conversation -> the pool criterion ids this judge said apply (P(yes) ≥ 0.5)."""
    out: dict[str, list[str]] = {}
    # (the store reads on its writer's thread: this judge's lane may be one of several in flight)
    rows = store.select(
        "judgments",
        ("target_id", "item", "value"),
        where={"judge": judge, "readable": 1},
        like={"item": SELECT + "%"},
        order_by=("judgment_id",),
    )
    for conv, item, value in rows:
        if value is not None and value >= 0.5:
            out.setdefault(conv, []).append(item.removeprefix(SELECT))
    return out


def borrowed_items(
    store: Store,
    judge: str,
    spec: BenchmarkDesignFile,
    grader: Grader,
    replies: Sequence[tuple[str, Conversation, str]],
) -> list[Item]:
    if "borrowed_criteria" not in spec.benchmark.validation:
        return []
    pool = {c.id: c for c in load_pool().criteria()}
    chosen = applicable(store, judge)
    out = []
    for reply_id, conv, text in replies:
        for cid in chosen.get(conv.id, []):
            messages = grader.messages(conv, text, pool[cid])
            out.append(
                Item(
                    reply_id,
                    BORROWED + cid,
                    tuple((m["role"], m["content"]) for m in messages),
                    f"borrowed:{reply_id}",
                    grader.ref,
                )
            )
    return out
