"""The engine's vocabulary: the judge calls a kind asks for (Task), the progress callback
(Tick), and the records a pilot reads. The judging phase and every kind import these; the
contract a kind fulfils, with the RunContext a run hands it, is in
experiments/engine/contract.py."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, Protocol

from diarylab.rubric.prompts import JudgePrompt, TemplateRef

if TYPE_CHECKING:
    pass

Tick = Callable[[int], None]
Question = Literal["number", "yes_no"]


class Cell(Protocol):
    """One unit of work a design expands into, with a stable id."""

    id: str


@dataclass(frozen=True)
class Task:
    """One judge call to make (or read back): what it judges, the item and the prompt. Tasks
    with the same `group` are questions over one shared prompt prefix (a local judge reads them
    in one pass)."""

    target_kind: str
    target_id: str
    item: str
    question: Question
    prompt: JudgePrompt
    template: TemplateRef
    group: str = ""


# --------------------------------------------------------------------------- pilots
@dataclass(frozen=True)
class ContrastSample:
    """One preregistered contrast under one judge in a pilot run: its per-cluster values and
    the score family whose single-text noise it carries ("pattern", "coherence", ...)."""

    hypothesis: str
    judge: str
    family: str
    values: tuple[float, ...]


@dataclass(frozen=True)
class TextNoise:
    """How much one judge's score of one text varies when the same prompt is written again:
    the pooled within-prompt SD over `prompts` prompts, each written `repeats` times."""

    judge: str
    family: str
    sd: float
    prompts: int
    repeats: int
