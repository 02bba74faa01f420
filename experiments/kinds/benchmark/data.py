"""Reading a benchmark file (JSONL, one conversation a line) into the lab's own records.

Two published schemas load: MentalHealthBench rows (`conversation.messages`, `rubric_items` with
`criterion_text`, `points`, `behavior_axis`; `acuity`; `language`; `canary_string`) and
HealthBench rows (`prompt`, `rubrics` with `criterion`, `points`, `tags`; `example_tags`).
Fields the lab does not use are ignored (the published files carry more than it reads); the ones
it uses are checked, and a malformed row stops with one error naming the file, the line and the
field. The canary string marks the data as evaluation-only: it is removed here, from every
message and criterion, so no text built from these records can carry it to a model."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from diarylab.foundation.datafiles import FIX_MARK, At, file_sha256, lab_error
from diarylab.foundation.errors import LabError

Format = Literal["mentalhealthbench", "healthbench"]
Acuity = Literal["non_acute", "high_acuity", "emergent"]
ACUITIES: tuple[Acuity, ...] = ("non_acute", "high_acuity", "emergent")
Role = Literal["system", "developer", "user", "assistant"]


class _Row(BaseModel):
    # Published rows hold more than the lab reads: unknown keys are ignored, used ones strict.
    model_config = ConfigDict(frozen=True, extra="ignore", strict=True)


class Message(_Row):
    role: Role
    content: str


def _ends_with_user(messages: list[Message], field: str) -> None:
    if messages and messages[-1].role != "user":
        raise At(
            (field, len(messages) - 1, "role"),
            f"the last message is from {messages[-1].role!r}; a benchmark conversation ends "
            f"with the user's turn, which the chatbot answers{FIX_MARK}check the file's rows",
        )


class MhbConversation(_Row):
    messages: list[Message] = Field(min_length=1)

    @model_validator(mode="after")
    def _last(self) -> MhbConversation:
        _ends_with_user(self.messages, "messages")
        return self


class MhbItem(_Row):
    criterion_text: str = Field(min_length=1)
    points: int | float
    behavior_axis: str = Field(min_length=1)


class MhbRow(_Row):
    id: str = Field(min_length=1)
    conversation: MhbConversation
    rubric_items: list[MhbItem] = Field(min_length=1)
    acuity: Acuity
    language: str = Field(min_length=1)
    canary_string: str | None = None


class HbItem(_Row):
    criterion: str = Field(min_length=1)
    points: int | float
    tags: list[str] = []


class HbRow(_Row):
    prompt_id: str = Field(min_length=1)
    prompt: list[Message] = Field(min_length=1)
    rubrics: list[HbItem] = Field(min_length=1)
    example_tags: list[str] = []
    canary: str | None = None

    @model_validator(mode="after")
    def _last(self) -> HbRow:
        _ends_with_user(self.prompt, "prompt")
        return self


@dataclass(frozen=True)
class Criterion:
    id: str  # "<conversation id>#<index>"
    text: str
    points: float
    axis: str
    # The file's rubric-item tags as HealthBench writes them ("axis:…", "level:…", "cluster:…");
    # a MentalHealthBench item has its axis only.
    tags: tuple[str, ...] = ()


@dataclass(frozen=True)
class Conversation:
    id: str
    messages: tuple[tuple[str, str], ...]  # (role, content), canary removed
    criteria: tuple[Criterion, ...]
    stratum: str  # acuity (MentalHealthBench) or theme (HealthBench): what the sample balances
    language: str
    tags: tuple[str, ...] = ()  # example-level tags ("theme:…"; MentalHealthBench: "acuity:…")

    def chat(self) -> list[dict[str, str]]:
        return [{"role": r, "content": c} for r, c in self.messages]

    @property
    def positive_points(self) -> float:
        return sum(c.points for c in self.criteria if c.points > 0)


@dataclass(frozen=True)
class Benchmark:
    path: Path
    format: Format
    sha256: str
    conversations: tuple[Conversation, ...]
    canaries: frozenset[str]  # every canary string seen, so callers can check nothing leaks

    def by_id(self) -> dict[str, Conversation]:
        return {c.id: c for c in self.conversations}


def _strip(text: str, canaries: set[str]) -> str:
    """The text without any canary string (and without the blank space it leaves at an end)."""
    found = [c for c in canaries if c in text]
    for canary in found:
        text = text.replace(canary, "")
    return text.strip() if found else text


def _from_mhb(row: MhbRow, canaries: set[str]) -> Conversation:
    items = tuple(
        Criterion(
            f"{row.id}#{i}",
            _strip(it.criterion_text, canaries),
            float(it.points),
            it.behavior_axis,
            (f"axis:{it.behavior_axis}",),
        )
        for i, it in enumerate(row.rubric_items)
    )
    messages = tuple((m.role, _strip(m.content, canaries)) for m in row.conversation.messages)
    tags = (f"acuity:{row.acuity}",)
    return Conversation(row.id, messages, items, row.acuity, row.language, tags)


def _tag(tags: list[str], prefix: str, default: str) -> str:
    return next((t.removeprefix(prefix) for t in tags if t.startswith(prefix)), default)


def _from_hb(row: HbRow, canaries: set[str]) -> Conversation:
    items = tuple(
        Criterion(
            f"{row.prompt_id}#{i}",
            _strip(it.criterion, canaries),
            float(it.points),
            _tag(it.tags, "axis:", "none"),
            tuple(dict.fromkeys(it.tags)),
        )
        for i, it in enumerate(row.rubrics)
    )
    messages = tuple((m.role, _strip(m.content, canaries)) for m in row.prompt)
    theme = _tag(row.example_tags, "theme:", "all")
    language = _tag(row.example_tags, "lang:", "und")
    tags = tuple(dict.fromkeys(row.example_tags))
    return Conversation(row.prompt_id, messages, items, theme, language, tags)


def load_benchmark(path: Path | str, fmt: Format) -> Benchmark:
    path = Path(path)
    if not path.is_file():
        raise LabError(
            "benchmark file not found",
            where=str(path),
            fix="point benchmark.data at your own copy of the JSONL file (it is not shipped)",
        )
    schema: type[MhbRow] | type[HbRow] = MhbRow if fmt == "mentalhealthbench" else HbRow
    rows: list[MhbRow | HbRow] = []
    try:
        lines = path.read_text(encoding="utf-8-sig").splitlines()
    except UnicodeDecodeError as exc:
        raise LabError("not UTF-8 text", where=str(path), fix="save the file as UTF-8") from exc
    for n, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = f"{path} line {n}"
        try:
            data = json.loads(line)
        except json.JSONDecodeError as exc:
            raise LabError(f"not valid JSON ({exc.msg})", where=where, fix="fix the row") from None
        if not isinstance(data, dict):
            raise LabError("a row must be a JSON object", where=where, fix="fix the row")
        try:
            rows.append(schema.model_validate(data))
        except ValidationError as exc:
            raise lab_error(exc, data, where) from None
    if not rows:
        raise LabError("the file holds no rows", where=str(path), fix="point at the JSONL file")
    canaries = {c for r in rows if (c := _canary(r))}
    convert = _from_mhb if fmt == "mentalhealthbench" else _from_hb
    conversations = tuple(convert(r, canaries) for r in rows)  # type: ignore[arg-type]
    _unique_ids(conversations, path)
    return Benchmark(path, fmt, file_sha256(path), conversations, frozenset(canaries))


def _canary(row: MhbRow | HbRow) -> str | None:
    value = row.canary_string if isinstance(row, MhbRow) else row.canary
    return value.strip() or None if value else None


def _unique_ids(conversations: tuple[Conversation, ...], path: Path) -> None:
    seen: set[str] = set()
    for n, c in enumerate(conversations, start=1):
        if c.id in seen:
            raise LabError(
                f"conversation id {c.id!r} appears twice (row {n})",
                where=str(path),
                fix="each row needs its own id",
            )
        seen.add(c.id)


def leaks(text: Any, canaries: frozenset[str]) -> bool:
    """Whether a canary string occurs anywhere in a request about to be sent."""
    flat = text if isinstance(text, str) else json.dumps(text, ensure_ascii=False)
    return any(c in flat for c in canaries)
