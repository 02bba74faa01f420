"""What an experiment kind supplies to the engine, and what the engine hands it during a run.

The engine (experiments/runner.py) owns the run folder, lock, manifest, store, resume, the
loading of models, chatbots, judges and profiles, and the judging loop; a kind owns what is
particular to its experiment: its design schema, its cells, the conversation phase that writes
its texts, the judging tasks over those texts, and its report."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

from foundation.errors import LabError
from rubric.prompts import JudgePrompt, TemplateRef

if TYPE_CHECKING:
    from chatbots.base import Chatbot
    from diarists.profiles import Profile
    from experiments.design import Design, DesignFile
    from experiments.store import Store
    from model_access.local import LocalModel
    from model_access.settings import LocalSettings
    from rubric.judge_base import Judge

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


class ExperimentKind(Protocol):
    name: str
    schema: type[DesignFile]  # the kind's design schema (DesignFile plus its own tables)
    row_types: tuple[Any, ...]  # row dataclasses (with TABLE) of the store tables it writes

    def profile_refs(self, design: Design) -> list[str]:
        """The profiles the design's cells use: "unsteered", inline rule ids, or file paths."""

    def cells(self, design: Design, profile_ids: Sequence[str]) -> list[Any]: ...

    def describe(self, design: Design, cells: Sequence[Any]) -> str:
        """One line for `design check`: what the design will run."""

    def planned_units(self, design: Design, cells: Sequence[Any]) -> int:
        """Progress total of the conversation and judging phases (per judge: tasks)."""

    def converse(self, run: RunContext) -> None:
        """The conversation phase: write every text through the store's cached-call door."""

    def judge_tasks(self, run: RunContext) -> Iterator[Task]:
        """Every judgment the design asks of each judge, in a fixed order. A kind whose
        judgments depend on the judge (each judge first writes an answer, then has it read)
        defines `judge_phase(run)` instead, and the engine calls that."""

    def input_files(self, design: Design) -> list[Path]:
        """The lab data files the kind's results depend on (role cards, patterns, templates,
        rubric...): locked into the run folder by hash, so a changed one is refused."""

    def manifest(self, run: RunContext) -> dict[str, Any]:
        """Data-file hashes and settings the kind adds to the manifest."""

    def report(self, folder: Path, store: Store, design: Design, resamples: int) -> Path:
        """Write folder/report/ from the store; returns the path of findings.md."""


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


@runtime_checkable
class PilotSupport(Protocol):
    """What a kind supplies so `diarylab pilot` can size a study of it (experiments/pilot.py).
    The engine runs the reduced design, then calls `resample` inside the run (models loaded,
    store open) and `contrast_samples` on the finished store."""

    cluster_word: str  # what a cluster is, for the pilot's table ("diarist", "role card")
    text_word: str  # what one written text is ("entry", "letter")

    def pilot_design(self, design: Design, clusters: int) -> dict[str, Any]:
        """The design's raw tables reduced to its first `clusters` clusters (paths made
        absolute, since the copy lives elsewhere); a LabError when it cannot be reduced so."""

    def clusters(self, design: Design) -> int:
        """How many clusters (diarists, pairs...) the full design has."""

    def resample(
        self, run: RunContext, judge_for: Callable[[str], Any], repeats: int, store: Store
    ) -> list[TextNoise]:
        """Write the same prompts `repeats` more times into `store` (through its cached-call
        door) and score them with every judge: the noise of a single text's score."""

    def contrast_samples(self, store: Store, design: Design) -> list[ContrastSample]:
        """Per-cluster values of every preregistered contrast under each of its judges."""
