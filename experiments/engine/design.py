"""Designs: the preregistration file that fixes everything a run does, as a typed schema.

A design is read once, validated completely (every mistake is one LabError naming the file, the
field and the fix) and frozen. `[design].kind` picks the experiment kind (experiments/kinds/),
whose schema extends DesignFile with the kind's own tables. The specs inside hold the runtime's
own settings objects (GenerationSettings, LocalSettings, EndpointSettings, SteerSettings...),
which reach the code that uses them unchanged. Its sha256 is the hash of the file's bytes."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Annotated, Any, ClassVar, Literal, Protocol

from pydantic import Field, StringConstraints, ValidationInfo, model_validator

from diarylab.chatbots.specs import ChatbotSpec
from diarylab.diarists.patterns import available_patterns
from diarylab.foundation.datafiles import FIX_MARK, At, DataModel, NonEmpty, Slug
from diarylab.foundation.errors import LabError
from diarylab.model_access.settings import GenerationSettings, LocalSettings, VllmSettings
from diarylab.rubric.judging.judges import JudgeSpec
from diarylab.steering.settings import CalibrationRule, ExtractionSettings, SteerSettings

UNSTEERED = "unsteered"


class Preregistered(Protocol):
    """A preregistered hypothesis as the engine sees it (the shared head is in
    experiments/analysis/hypotheses.py)."""

    @property
    def id(self) -> str: ...


class DesignHead(DataModel):
    name: Slug = Field(description="names the run folder: results/<name>-<hash>")
    kind: NonEmpty = Field(description="the experiment kind (diarylab design schema --kind)")
    version: int = Field(
        1,
        ge=1,
        description="the design's own version number (1, 2, ...), raised when a preregistration "
        "is revised",
    )
    description: str | None = Field(
        None,
        description="free text saying what the experiment is for (shown nowhere else; optional)",
    )
    seed: int = Field(ge=0, lt=2**63, description="every call's seed derives from it")
    entries: int = Field(4, ge=1, le=100, description="entries (or letters) per conversation")
    coverage_floor: float = Field(
        0.5,
        ge=0,
        le=1,
        description="judgments with less probability on valid answers are unreadable",
    )


class DiaristModel(DataModel):
    model: NonEmpty = Field(description='hub id, folder, or "smollm2" (the embedded default)')
    generation: GenerationSettings = Field(
        GenerationSettings(max_new_tokens=300, temperature=0.9),
        description="how entries are generated (default: 300 new tokens, temperature 0.9)",
    )
    local: LocalSettings = Field(
        LocalSettings(),
        description="how the model is loaded and batched (device, dtype, revision, batch size)",
    )
    engine: Literal["transformers", "vllm"] = Field(
        "transformers",
        description='what generates: transformers + nnsight here, or "vllm" (a worker in the vLLM '
        "venv of scripts/setup-vllm.sh; the same steering, seeds per row)",
    )
    vllm: VllmSettings = Field(
        VllmSettings(), description='how the vLLM worker is sized when engine = "vllm"'
    )


class AnalysisSettings(DataModel):
    """What every kind's analysis has; a kind's schema extends it with its own settings."""

    resamples: int = Field(2000, ge=100, le=1_000_000, description="bootstrap resamples")


class ProfileRule(DataModel):
    """A profile declared in the design as a pattern and the rule that sets its strength:
    `run` extracts the vector on the diarist model, then either steers with the fixed `steer`
    setting or calibrates by `calibration`, once, keeping both in the run folder."""

    id: Slug = Field(description="the profile's id, as [cast].profiles and hypotheses name it")
    pattern: Slug = Field(
        description="the pattern to steer toward (diarylab's patterns: social_isolation, "
        "entitlement, unrelenting_standards)"
    )
    extraction: ExtractionSettings = Field(
        ExtractionSettings(),
        description="how the pattern's vector is extracted on the diarist model (contrast pairs, "
        "generation, batch size)",
    )
    steer: SteerSettings | None = Field(None, description="a fixed setting (no calibration)")
    calibration: CalibrationRule | None = Field(None, description="the sweep that chooses one")

    @model_validator(mode="after")
    def _one_rule(self) -> ProfileRule:
        if (self.steer is None) == (self.calibration is None):
            raise ValueError(
                f"profile {self.id!r} needs exactly one of steer and calibration"
                f"{FIX_MARK}give `calibration = {{ judge, layers, strengths, floor }}` (or a "
                "fixed `steer = { layers, strength }`)"
            )
        if self.pattern not in available_patterns():
            raise ValueError(
                f"unknown pattern {self.pattern!r}"
                f"{FIX_MARK}choose from {', '.join(available_patterns())}"
            )
        return self


HexSha256 = Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{64}$")]


class DerivedFrom(DataModel):
    """A finished run folder whose texts this design reuses (experiments/derived/reuse.py): its
    entries, letters or replies are copied in and never written again; only what this design
    judges, scores or analyses differently is made. Both hashes lock the run as it was when
    this design was written; `design check` prints them when they are missing."""

    run: NonEmpty = Field(
        description="the finished run folder, relative to this design file (or absolute)"
    )
    design_sha256: HexSha256 | None = Field(
        None, description="the sha256 of that run's design (its design.sha256)"
    )
    texts_sha256: HexSha256 | None = Field(
        None,
        description="the sha256 of the texts reused: every writing and chatbot call of the run "
        "and its text rows (design check prints it)",
    )


def _unique(table: str, ids: Sequence[str], what: str) -> None:
    seen: set[str] = set()
    for i, ident in enumerate(ids):
        if ident in seen:
            raise At(
                (table, i, "id"), f"{what} id {ident!r} is used twice{FIX_MARK}give each its own id"
            )
        seen.add(ident)


def with_design_judges(design: Any) -> Any:
    """The design's raw tables with every hypothesis that names no judges given the design's
    [[judges]] ids: the run-level default a hypothesis inherits."""
    if not isinstance(design, Mapping) or not isinstance(design.get("hypotheses"), list):
        return design
    ids = [j.get("id") for j in design.get("judges", []) if isinstance(j, Mapping)]
    hypotheses = [
        {**h, "judges": ids} if isinstance(h, Mapping) and "judges" not in h else h
        for h in design["hypotheses"]
    ]
    return {**design, "hypotheses": hypotheses}


class DesignFile(DataModel):
    """The tables every kind shares; a kind's schema adds its own (a kind that answers with
    chatbots requires them, a kind that tests hypotheses declares them, a kind that writes texts
    with a steered diarist model extends WritingDesignFile)."""

    # Whether the kind writes texts with a diarist model: only WritingDesignFile does.
    writes: ClassVar[bool] = False

    design: DesignHead = Field(
        description="[design]: the name, kind, seed, entries and coverage floor of the experiment"
    )
    chatbots: list[ChatbotSpec] = Field([], description="the chatbots that answer")
    judges: list[JudgeSpec] = Field(
        min_length=1,
        description="[[judges]]: the judge models that score what was written (at least one)",
    )
    analysis: AnalysisSettings = Field(
        AnalysisSettings(),
        description="[analysis]: how the results are analysed (bootstrap resamples)",
    )
    derived_from: DerivedFrom | None = Field(
        None, description="reuse the texts of a finished run: judge or analyse them anew"
    )

    # What a derived design may set differently from the run it reuses (dotted field paths;
    # everything else determines the texts and must be equal): a kind adds its own.
    judging_fields: ClassVar[tuple[str, ...]] = (
        "design.name",
        "design.version",
        "design.description",
        "design.coverage_floor",
        "judges",
        "analysis",
        "derived_from",
    )
    # Fields that determine texts but are compared in their own way, not as written: profile
    # references (by the steering each profile applies) and data-file paths (by the file's hash).
    compared_apart: ClassVar[tuple[str, ...]] = ()

    @model_validator(mode="before")
    @classmethod
    def _hypotheses_inherit_the_judges(cls, data: Any) -> Any:
        return with_design_judges(data)

    @property
    def writing_model(self) -> DiaristModel | None:
        """The diarist model, for a kind that writes; None for one that writes nothing."""
        return None

    @property
    def writer(self) -> DiaristModel:
        """The diarist model of a kind that writes (its presence is checked on loading)."""
        if self.writing_model is None:
            raise LabError(
                f"a {self.design.kind} design has no diarist model", where="[diarist_model]"
            )
        return self.writing_model

    @property
    def profile_rules(self) -> Sequence[ProfileRule]:
        """The inline [[profiles]] rules (only a writing kind steers, so has any)."""
        return ()

    @model_validator(mode="after")
    def _judges_say_how_they_are_read(self, info: ValidationInfo) -> DesignFile:
        # Without a tokenizer a served judge can only be read from its top-k (never exact);
        # a design must say so rather than get it silently (the command line's --judge keeps
        # its default: it is a one-off reading, not a preregistration). A run locked before
        # this rule keeps its meaning: top-k, as it was read.
        if (info.context or {}).get("locked"):
            return self
        for i, judge in enumerate(self.judges):
            if judge.top_k_unsaid:
                raise At(
                    ("judges", i, "tokenizer"),
                    f"judge {judge.id!r} has no tokenizer, so it can only be read from top-k "
                    f"log-probabilities (never exact){FIX_MARK}name its tokenizer (a hub id or a "
                    'folder with its tokenizer files), or say mode = "top-k"',
                )
        return self

    @model_validator(mode="after")
    def _names(self) -> DesignFile:
        _unique("chatbots", [c.id for c in self.chatbots], "chatbot")
        _unique("judges", [j.id for j in self.judges], "judge")
        _unique("hypotheses", [h.id for h in self.preregistered()], "hypothesis")
        return self

    def preregistered(self) -> Sequence[Preregistered]:
        """The design's preregistered hypotheses (none for a kind without them)."""
        return ()

    def check_hypotheses(self, profile_ids: list[str]) -> None:
        """Every name a hypothesis uses exists (a kind with hypotheses checks its own). Profile
        files' ids are known only once the files are read: this runs again with them."""

    def chatbot(self, chatbot_id: str) -> Any:
        return next(c for c in self.chatbots if c.id == chatbot_id)

    def judge(self, judge_id: str) -> Any:
        return next(j for j in self.judges if j.id == judge_id)

    def profile_rule(self, profile_id: str) -> ProfileRule | None:
        return next((p for p in self.profile_rules if p.id == profile_id), None)
