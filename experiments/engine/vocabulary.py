"""The engine's vocabulary: what a run hands a kind (RunContext), the judge calls a kind asks
for (Task), the progress callback (Tick), and the records a pilot reads. The judging phase and
every kind import these; the contract a kind fulfils is in experiments/engine/contract.py."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

from diarylab.foundation.errors import LabError
from diarylab.rubric.prompts import JudgePrompt, TemplateRef

if TYPE_CHECKING:
    from diarylab.chatbots.base import Chatbot
    from diarylab.diarists.profiles import Profile
    from diarylab.experiments.engine.design import Design
    from diarylab.experiments.engine.store import Store
    from diarylab.model_access.local import LocalModel
    from diarylab.model_access.settings import LocalSettings
    from diarylab.rubric.judge_base import Judge

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


@dataclass
class RunContext:
    """Everything a kind's phases need, loaded once by the engine."""

    design: Design
    folder: Path
    store: Store
    writer_model: LocalModel | None  # None for a kind that writes nothing (benchmark)
    profiles: dict[str, Profile]
    chatbots: dict[str, Chatbot]
    cells: Sequence[Any]
    tick: Tick = field(default=lambda n: None)
    # The design's judges by id (built on first use) and the run's shared local models: for a
    # kind that runs its own judging phase (judge_phase below).
    judge: Callable[[str], Judge] | None = None
    load_local: Callable[[str, LocalSettings], LocalModel] | None = None

    def writer(self) -> LocalModel:
        """The diarist model, for a kind that writes (the design check makes sure it has one)."""
        if self.writer_model is None:
            raise LabError(f"a {self.design.spec.design.kind} run has no diarist model")
        return self.writer_model


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
