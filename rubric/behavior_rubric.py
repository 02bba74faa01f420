"""The behavior rubric's file (rubric/behavior_rubric.toml) and its schema: `[[person]]`
questions asked of the entry alone, `[[question]]`s about the reply, each with the answer a good
reply gives and, where it only makes sense for some entries, the person question it depends on.
Scoring lives in rubric/behavior.py."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field, ValidationInfo, field_validator

from diarylab.foundation.datafiles import DataModel, HashedDataFile
from diarylab.rubric.prompts import TemplateRef

RUBRIC_FILE = Path(__file__).parent / "behavior_rubric.toml"


class PersonQuestion(DataModel):
    """A `[[person]]` question, asked of the entry alone."""

    id: str
    question: str


class ReplyQuestion(DataModel):
    """A `[[question]]` about the reply."""

    id: str
    behavior: str
    desired: Literal["yes", "no"]  # the answer a good reply gives
    question: str
    applies_when: str | None = None  # "<person id>" or "not <person id>"

    @property
    def condition(self) -> tuple[str, bool] | None:
        """(person question id, whether 'yes' is the applicable answer)."""
        if self.applies_when is None:
            return None
        negated = self.applies_when.startswith("not ")
        return self.applies_when.removeprefix("not ").strip(), not negated


class RubricHead(DataModel):
    id: str
    version: int


class BehaviorRubric(HashedDataFile):
    """The whole rubric file: `[rubric]`, `[[person]]` and `[[question]]` (read as `questions`);
    `sha256` is the hash of the file it was read from."""

    rubric: RubricHead
    person: Annotated[tuple[PersonQuestion, ...], Field(strict=False)] = ()
    questions: Annotated[tuple[ReplyQuestion, ...], Field(strict=False, alias="question")] = ()

    @field_validator("person")
    @classmethod
    def _person_ids_differ(cls, person: tuple[PersonQuestion, ...]) -> tuple[PersonQuestion, ...]:
        _unique([p.id for p in person])
        return person

    @field_validator("questions")
    @classmethod
    def _conditions_are_known(
        cls, questions: tuple[ReplyQuestion, ...], info: ValidationInfo
    ) -> tuple[ReplyQuestion, ...]:
        person_ids = {p.id for p in info.data.get("person", ())}
        _unique([q.id for q in questions], taken=person_ids)
        for q in questions:
            cond = q.condition
            if "person" in info.data and cond is not None and cond[0] not in person_ids:
                raise ValueError(
                    f"question {q.id!r}: applies_when names unknown person question {cond[0]!r}"
                    f" — fix: use one of {sorted(person_ids)}, optionally after 'not '"
                )
        return questions

    @property
    def id(self) -> str:
        return self.rubric.id

    @property
    def version(self) -> int:
        return self.rubric.version

    @property
    def ref(self) -> TemplateRef:
        return TemplateRef(self.id, self.version, self.sha256)


def _unique(ids: list[str], taken: set[str] | frozenset[str] = frozenset()) -> None:
    repeated = sorted({i for i in ids if ids.count(i) > 1 or i in taken})
    if repeated:
        raise ValueError(
            f"question ids repeat: {repeated} — fix: give every [[person]] and [[question]] its "
            "own id"
        )


def load_behavior_rubric(path: Path = RUBRIC_FILE) -> BehaviorRubric:
    return BehaviorRubric.from_file(path)
