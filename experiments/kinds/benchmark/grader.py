"""The grader prompt for one benchmark criterion, and reading what the judge wrote.

A template is the lab's own (grader.toml beside this file) or the user's: a .toml in the same
schema, or a .txt holding a published user message exactly. A .toml carries what a .txt cannot:
an optional system message and the judge's token cap (`max_tokens`, 2,048 by default as in
HealthBench's reference grader), so a published grader is reproduced whole; with `exact = true`
its text is pasted verbatim, `<<conversation>>` and `<<rubric_item>>` marking where the blocks
and the criterion go and nothing else touched (no brace escaping). Its sha256 goes into the
manifest and every judgment made from it. The judge writes a JSON answer; the part up to the
answer key ("criteria_met":) becomes the prefill after which the lab reads P(true)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from pydantic import Field

from diarylab.experiments.kinds.benchmark.data import Conversation, Criterion
from diarylab.foundation.datafiles import DataModel, NonEmpty, file_sha256, load_data
from diarylab.foundation.errors import LabError
from diarylab.rubric.prompts import TemplateRef

LAB_TEMPLATE = Path(__file__).parent / "grader.toml"
ANSWER_WORDS = ("true", "false")
DEFAULT_MAX_TOKENS = 2048  # HealthBench's reference grader: ChatCompletionSampler(max_tokens=2048)
EXACT_MARKS = ("<<conversation>>", "<<rubric_item>>")
_FENCE = re.compile(r"^\s*```[A-Za-z]*\s*\n?|\n?\s*```\s*$")


class GraderTemplate(DataModel):
    id: NonEmpty
    version: int
    system: str = ""
    user: NonEmpty
    turn: NonEmpty = "{role}: {content}"
    separator: str = "\n\n"
    criterion: NonEmpty = "[{points}] {text}"
    answer_key: NonEmpty = "criteria_met"
    max_tokens: int = Field(
        DEFAULT_MAX_TOKENS, ge=1, le=32768, description="the judge's written answer at most"
    )
    exact: bool = Field(
        False,
        description="user and system are published text used verbatim: only <<conversation>> "
        "and <<rubric_item>> are replaced (no {placeholders}, no brace escaping)",
    )


class GraderFile(DataModel):
    grader: GraderTemplate


@dataclass(frozen=True)
class Grader:
    template: GraderTemplate
    sha256: str
    path: Path
    # Sent as the system message when the template has none: the design's grader.defaults
    # ("You are a helpful assistant." for HealthBench's reference grader, "" for the lab's).
    default_system: str = ""

    @property
    def exact_text(self) -> bool:
        """Placeholders replaced, nothing else touched (a .txt, or a .toml with exact = true)."""
        return self.template.exact

    @property
    def ref(self) -> TemplateRef:
        return TemplateRef(self.template.id, self.template.version, self.sha256)

    def blocks(self, conversation: Conversation, reply: str) -> str:
        turns = [*conversation.messages, ("assistant", reply)]
        t = self.template
        return t.separator.join(t.turn.format(role=r, content=c) for r, c in turns)

    def criterion_text(self, criterion: Criterion) -> str:
        points = int(criterion.points) if criterion.points.is_integer() else criterion.points
        return self.template.criterion.format(points=points, text=criterion.text)

    def messages(
        self, conversation: Conversation, reply: str, criterion: Criterion
    ) -> list[dict[str, str]]:
        blocks, item = self.blocks(conversation, reply), self.criterion_text(criterion)
        t = self.template
        if self.exact_text:
            user = t.user.replace(EXACT_MARKS[0], blocks).replace(EXACT_MARKS[1], item)
            system = t.system.replace(EXACT_MARKS[0], blocks).replace(EXACT_MARKS[1], item)
        else:
            user = t.user.format(conversation=blocks, criterion=item)
            system = t.system.format(conversation=blocks, criterion=item)
        system = system if system.strip() else self.default_system
        head = [{"role": "system", "content": system}] if system.strip() else []
        return [*head, {"role": "user", "content": user}]


def load_grader(path: Path | None = None) -> Grader:
    path = Path(path) if path is not None else LAB_TEMPLATE
    if path.suffix == ".txt":
        if not path.is_file():
            raise LabError("grader template not found", where=str(path), fix="check the path")
        text = path.read_text(encoding="utf-8")
        template = GraderTemplate(id=f"user:{path.name}", version=1, user=text, exact=True)
        _has_marks(template, str(path))
        return Grader(template, file_sha256(path), path)
    template = load_data(path, GraderFile)[0].grader
    if template.exact:
        _has_marks(template, f"{path} grader.user")
    else:
        for name in ("{conversation}", "{criterion}"):
            if name not in template.user + template.system:
                raise LabError(
                    f"the template never uses {name}",
                    where=f"{path} grader.user",
                    fix=f"put {name} where it belongs (or set exact = true and mark the places "
                    "with <<conversation>> and <<rubric_item>>)",
                )
    return Grader(template, file_sha256(path), path)


def _has_marks(template: GraderTemplate, where: str) -> None:
    missing = [m for m in EXACT_MARKS if m not in template.user + template.system]
    if missing:
        raise LabError(
            f"the template has no {', '.join(missing)}",
            where=where,
            fix="mark where the conversation and the criterion go with <<conversation>> and "
            "<<rubric_item>>",
        )


@dataclass(frozen=True)
class WrittenAnswer:
    met: bool | None  # None: malformed
    explanation: str | None
    prefix: str | None  # the written text up to and including the answer key and its colon


def read_answer(text: str, answer_key: str = "criteria_met") -> WrittenAnswer:
    """A JSON object whose answer key holds a boolean, once code fences are stripped; the
    explanation may be missing or of any type, as HealthBench's reference accepts (its grader
    loop keeps any answer whose `criteria_met` is True or False). Anything else is malformed.
    The prefix keeps the judge's own text (fences too)."""
    body = _FENCE.sub("", text.strip())
    parsed = _json_object(body)
    if parsed is None:
        return WrittenAnswer(None, None, None)
    met, why = parsed.get(answer_key), parsed.get("explanation")
    at = re.search(rf'"{re.escape(answer_key)}"\s*:', text)
    if not isinstance(met, bool) or at is None:
        return WrittenAnswer(None, None, None)
    explanation = why if isinstance(why, str) or why is None else json.dumps(why)
    return WrittenAnswer(met, explanation, text[: at.end()].lstrip())


def _json_object(body: str) -> dict[str, object] | None:
    for candidate in (body, body[body.find("{") : body.rfind("}") + 1]):
        try:
            value = json.loads(candidate)
        except (json.JSONDecodeError, ValueError):
            continue
        if isinstance(value, dict):
            return value
    return None
