"""What an experiment kind supplies to the engine (experiments/running/runner.py): its design
schema, cells, conversation phase, judging phase and report. The engine owns the run folder, lock,
manifest, store, resume, the loading of models, chatbots, judges and profiles; the shared
judging loop is `TaskJudging.judge_phase`, which a kind whose judgments are a fixed list of
tasks inherits, and a kind whose judging differs (the benchmark) writes its own.

The contract's two sides live here together: a loaded `Design` (the validated schema, the file
and its kind) and the `RunContext` a run hands a kind, beside the `ExperimentKind` they name —
so the schema (design.py) and the vocabulary (vocabulary.py) import nothing back."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, runtime_checkable

from diarylab.experiments.engine.design import DesignFile, Preregistered
from diarylab.experiments.engine.judging import judge_tasks
from diarylab.experiments.engine.lanes import judge_lane, lanes_of, run_lanes
from diarylab.experiments.engine.tasks import ContrastSample, Task, TextNoise, Tick
from diarylab.foundation.errors import LabError

if TYPE_CHECKING:
    import pandas as pd

    from diarylab.chatbots.base import Chatbot
    from diarylab.diarists.profiles import Profile
    from diarylab.experiments.engine.store import Row, Store
    from diarylab.experiments.engine.workload import Workload
    from diarylab.model_access.local import LocalModel
    from diarylab.model_access.shared_models import LocalModels
    from diarylab.rubric.judging.judge_base import Judge


@dataclass(frozen=True, eq=False)
class Design:
    """A loaded design: the validated schema, the file it came from and its kind."""

    path: Path
    sha256: str
    raw: dict[str, Any]
    spec: DesignFile
    kind: ExperimentKind[Any]  # each kind's cells are its own type

    @property
    def name(self) -> str:
        return self.spec.design.name

    @property
    def seed(self) -> int:
        return self.spec.design.seed

    @property
    def entries(self) -> int:
        return self.spec.design.entries

    @property
    def coverage_floor(self) -> float:
        return self.spec.design.coverage_floor

    @property
    def resamples(self) -> int:
        return self.spec.analysis.resamples

    @property
    def hypotheses(self) -> tuple[Preregistered, ...]:
        return tuple(self.spec.preregistered())


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
    models: LocalModels | None = None

    def writer(self) -> LocalModel:
        """The diarist model, for a kind that writes (the design check makes sure it has one)."""
        if self.writer_model is None:
            raise LabError(f"a {self.design.spec.design.kind} run has no diarist model")
        return self.writer_model


CellT = TypeVar("CellT")


class ExperimentKind(Protocol[CellT]):
    """What a kind supplies the engine, typed by its own cell (a diary conversation, a
    friends pair, a benchmark item): the engine hands the cells it listed back to it."""

    # read-only (properties), so a kind may narrow them: its own schema, its own rows
    @property
    def name(self) -> str: ...

    @property
    def schema(self) -> type[DesignFile]:
        """The kind's design schema (DesignFile plus its own tables)."""

    @property
    def row_types(self) -> tuple[type[Row], ...]:
        """Row dataclasses (with TABLE) of the store tables it writes."""

    def profile_refs(self, design: Design) -> list[str]:
        """The profiles the design's cells use: "unsteered", inline rule ids, or file paths."""

    def cells(self, design: Design, profile_ids: Sequence[str]) -> list[CellT]: ...

    def describe(self, design: Design, cells: Sequence[CellT]) -> str:
        """One line for `design check`: what the design will run."""

    def planned_units(self, design: Design, cells: Sequence[CellT]) -> int:
        """Progress total of the conversation and judging phases (per judge: tasks)."""

    def converse(self, run: RunContext) -> None:
        """The conversation phase: write every text through the store's cached-call door."""

    def judge_phase(self, run: RunContext) -> None:
        """The judging phase: every judgment the design asks of each judge, through the store
        (TaskJudging gives the shared loop over a kind's tasks)."""

    def input_files(self, design: Design) -> list[Path]:
        """The lab data files the kind's results depend on (role cards, patterns, templates,
        rubric...): locked into the run folder by hash, so a changed one is refused."""

    def manifest(self, run: RunContext) -> dict[str, Any]:
        """Data-file hashes and settings the kind adds to the manifest."""

    def report(self, folder: Path, store: Store, design: Design, resamples: int) -> Path:
        """Write folder/report/ from the store; returns the path of findings.md."""


class TaskJudging(ABC):
    """The shared judging phase for a kind whose judgments are a fixed list of tasks: each
    judge of the design reads every task."""

    @abstractmethod
    def judge_tasks(self, run: RunContext) -> Iterator[Task]:
        """Every judgment the design asks of each judge, in a fixed order."""

    def judge_phase(self, run: RunContext) -> None:
        """Every judge at once (experiments/engine/lanes.py): a served judge in a lane of its
        own, the local ones one after another in one lane."""
        design = run.design
        judge = run.judge
        assert judge is not None, "the engine sets run.judge before the judging phase"
        tasks = list(self.judge_tasks(run))  # the same tasks for every judge: listed once
        jobs = [
            (
                judge_lane(spec, judge),
                lambda judge_id=spec.id: judge_tasks(
                    run.store,
                    judge_id,
                    lambda: judge(judge_id),
                    tasks,
                    design.coverage_floor,
                    run.tick,
                ),
            )
            for spec in design.spec.judges
        ]
        run_lanes(run.store, lanes_of(jobs))


@runtime_checkable
class PlanSupport(Protocol):
    """What a kind supplies so `diarylab plan` (experiments/planning/) can count it."""

    def workload(self, design: Design, cells: Sequence[Any]) -> Workload:
        """The texts each phase writes and the readings per judge; the shipped kinds count
        their progress total from it."""


@runtime_checkable
class PilotSupport(Protocol):
    """What a kind supplies so `diarylab pilot` can size a study of it
    (experiments/running/pilot.py). The engine runs the reduced design, then calls `resample`
    inside the run (models loaded, store open) and `contrast_samples` on the finished store."""

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


@runtime_checkable
class ReuseSupport(Protocol):
    """What a kind supplies so a design can reuse a finished run's texts
    (experiments/derived/reuse.py): the rows that are its texts, the ids its cells need, and the
    input files that made them. What a derived design may change is its schema's
    `judging_fields`."""

    text_rows: tuple[Any, ...]  # row types (of row_types) whose rows are the texts reused
    text_calls: tuple[str, ...]  # the call kinds whose results are those texts ("diarist", ...)

    def text_ids(self, design: Design, cells: Sequence[Any]) -> dict[str, set[str]]:
        """Per text table, the ids of every text the cells need."""

    def text_inputs(self, design: Design) -> list[Path]:
        """The input files (of input_files) the texts were made from."""


@runtime_checkable
class VerdictSupport(Protocol):
    """A kind whose designs preregister hypotheses: their verdicts per judge, as the report
    states them (the same evaluation, the same settings), for open_run(...).verdicts()."""

    def verdicts(self, store: Store, design: Design, resamples: int) -> pd.DataFrame:
        """A pandas frame: one row per hypothesis × judge (the report's tables/hypotheses.csv
        columns, without its row ids)."""


@runtime_checkable
class GraderTemplateSupport(Protocol):
    """A kind whose judges write answers by a grader template, which `run --grader-template
    FILE` replaces for one run (the benchmark)."""

    def with_grader_template(self, design: Design, path: Path) -> Design:
        """The design with FILE in place of its grader template (refused if FILE is bad)."""
