"""The diary experiment's design tables, on top of the tables every design has: [cast]
(diarists and profiles), [scores] (what every entry is scored for), at least one chatbot, its
[analysis] (the baseline chatbot, the fewest diarists a verdict is read from) and its
[[hypotheses]] (experiments/kinds/diary/contrasts.py)."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar, Literal

from pydantic import Field, ValidationInfo, field_validator, model_validator

from diarylab.chatbots.specs import ChatbotSpec
from diarylab.diarists.cards import available_cards
from diarylab.diarists.patterns import available_patterns
from diarylab.experiments.analysis.rules import TestedAnalysis
from diarylab.experiments.analysis.verdicts import MIN_CLUSTERS
from diarylab.experiments.engine.design import UNSTEERED, DesignFile
from diarylab.experiments.engine.writing_design import WritingDesignFile
from diarylab.experiments.kinds.diary.contrasts import Hypothesis
from diarylab.foundation.datafiles import FIX_MARK, At, DataModel, NonEmpty, Slug

# The judge id under which the judge-free pattern measure is stored beside the judges' scores.
PROJECTION = "projection"

EntryScore = Literal["pattern", "coherence", "realism"]
ENTRY_SCORES: tuple[EntryScore, ...] = ("pattern", "coherence", "realism")


def _chosen(
    value: list[str] | Literal["all"], known: list[str], noun: str, field: str = ""
) -> list[str]:
    if value == "all":
        return list(known)
    for i, ident in enumerate(value):
        if ident not in known:
            raise At(
                (field, i) if field else (),
                f'unknown {noun} {ident!r}{FIX_MARK}choose from {", ".join(known)} or write "all"',
            )
    if len(set(value)) != len(value):
        at = next(i for i, v in enumerate(value) if v in value[:i])
        raise At((field, at) if field else (), f"a {noun} is listed twice{FIX_MARK}list each once")
    return list(value)


class Cast(DataModel):
    diarists: list[Slug] | Literal["all"] = Field(
        min_length=1, description='role-card ids, or "all"'
    )
    profiles: list[NonEmpty] = Field(
        min_length=1,
        description='"unsteered", the id of an inline [[profiles]] rule, or a profile file path '
        "(relative to the design file)",
    )

    @field_validator("profiles")
    @classmethod
    def _profile_files_exist(cls, refs: list[str], info: ValidationInfo) -> list[str]:
        """A profile file the design names is there: told with the design's other mistakes,
        not after them. A locked run's copy names files its folder holds copies of."""
        context = info.context or {}
        design = context.get("design_path")
        if design is None or context.get("locked"):
            return refs
        for i, ref in enumerate(refs):
            path = Path(ref).expanduser()
            path = path if path.is_absolute() else Path(design).parent / path
            if ref.endswith(".toml") and not path.is_file():
                raise At(
                    ("profiles", i),
                    f"profile file {ref!r} not found (looked at {path}){FIX_MARK}fix the path "
                    "(relative to the design file), write the profile with `diarylab steer "
                    "calibrate`, or declare it inline as a [[profiles]] rule",
                )
        return refs

    @model_validator(mode="after")
    def _known(self) -> Cast:
        _chosen(self.diarists, available_cards(), "diarist", "diarists")
        if len(set(self.profiles)) != len(self.profiles):
            at = next(i for i, v in enumerate(self.profiles) if v in self.profiles[:i])
            raise At(("profiles", at), f"a profile is listed twice{FIX_MARK}list each once")
        return self

    @property
    def diarist_ids(self) -> list[str]:
        return _chosen(self.diarists, available_cards(), "diarist")


class Scores(DataModel):
    entry: list[EntryScore] = Field(
        list(ENTRY_SCORES),
        min_length=1,
        description='what every entry is scored for: "pattern", "coherence", "realism" (0–100 '
        "each)",
    )
    patterns: list[Slug] | Literal["all"] = Field(
        "all", description='patterns every entry gets a score for, or "all"'
    )

    @model_validator(mode="after")
    def _known(self) -> Scores:
        _chosen(self.patterns, available_patterns(), "pattern", "patterns")
        if len(set(self.entry)) != len(self.entry):
            raise At(("entry",), f"an entry score is listed twice{FIX_MARK}list each once")
        return self

    @property
    def pattern_ids(self) -> list[str]:
        return _chosen(self.patterns, available_patterns(), "pattern")


class DiaryAnalysis(TestedAnalysis):
    cluster: Literal["diarist"] = Field(
        "diarist", description="the unit of every interval and test: the diarist"
    )

    @property
    def cluster_column(self) -> str:
        """The column of the entry and reply tables that holds the cluster."""
        return {"diarist": "diarist"}[self.cluster]

    baseline_chatbot: Slug = Field("thanks", description="the chatbot drift is compared with")
    min_diarists: int = Field(
        MIN_CLUSTERS,
        ge=2,
        le=100_000,
        description="fewer diarists than this give a hypothesis no verdict ('too few diarists')",
    )

    @property
    def min_clusters(self) -> int:
        return self.min_diarists


class DiaryDesignFile(WritingDesignFile):
    judging_fields: ClassVar[tuple[str, ...]] = (
        *DesignFile.judging_fields,
        "scores",
        "hypotheses",
    )
    compared_apart: ClassVar[tuple[str, ...]] = ("cast.profiles",)

    cast: Cast = Field(
        description='[cast]: the diarists (role card ids, or "all") and the profiles they write as'
    )
    scores: Scores = Field(
        Scores(), description="[scores]: what entries are scored for and which patterns"
    )
    chatbots: list[ChatbotSpec] = Field(min_length=1, description="the chatbots that answer")
    analysis: DiaryAnalysis = Field(
        DiaryAnalysis(),
        description="[analysis]: bootstrap resamples, cluster, baseline chatbot and decision rule",
    )
    hypotheses: list[Hypothesis] = Field(
        [],
        description="[[hypotheses]]: the preregistered contrasts and their directions (none: a "
        "descriptive run)",
    )

    def preregistered(self) -> list[Hypothesis]:
        return self.hypotheses

    @model_validator(mode="after")
    def _baseline_chatbot(self) -> DiaryDesignFile:
        if self.analysis.baseline_chatbot not in {c.id for c in self.chatbots}:
            raise At(
                ("analysis", "baseline_chatbot"),
                f"baseline chatbot {self.analysis.baseline_chatbot!r} is not among the chatbots"
                f"{FIX_MARK}add a fixed-reply chatbot with that id or name an existing one",
            )
        return self

    def check_hypotheses(self, profile_ids: list[str]) -> None:
        """Every name a hypothesis uses exists. A profile file's id is only known once the file
        is read: until then (refs ending in .toml) the profile names in contrasts are taken on
        trust, and this runs again with the files' ids before anything runs."""
        ids = set(profile_ids)
        if any(i.endswith(".toml") for i in ids):
            ids = {i for i in ids if not i.endswith(".toml")} | {"(a profile file)"}
            ids |= {h.contrast.profile for h in self.hypotheses}
        for h in self.hypotheses:
            h.check_names(
                judges={j.id for j in self.judges},
                profiles=ids,
                chatbots={c.id for c in self.chatbots},
                entries=self.design.entries,
            )

    @model_validator(mode="after")
    def _profiles_and_hypotheses(self) -> DiaryDesignFile:
        inline = {p.id for p in self.profiles}
        for ref in self.cast.profiles:
            if ref != UNSTEERED and ref not in inline and not ref.endswith(".toml"):
                raise ValueError(
                    f"cast.profiles: {ref!r} is neither unsteered, an inline profile nor a "
                    f"profile file{FIX_MARK}add a [[profiles]] rule with id = {ref!r}, or give a "
                    "path to a profile .toml"
                )
        unused = inline - set(self.cast.profiles)
        if unused:
            raise ValueError(
                f"inline profile(s) {', '.join(sorted(unused))} are not in cast.profiles"
                f"{FIX_MARK}list them in cast.profiles or remove them"
            )
        for i, judge in enumerate(self.judges):
            if judge.id == PROJECTION:
                raise At(
                    ("judges", i, "id"),
                    f"judge id {PROJECTION!r} is the lab's judge-free pattern measure"
                    f"{FIX_MARK}give this judge another id",
                )
        # Patterns scored, one left out: the trap of a list written by hand. A design that
        # scores no pattern at all chose so (the judge-free projection still measures steering).
        scored = set(self.scores.pattern_ids)
        for i, rule in enumerate(self.profiles):
            if "pattern" in self.scores.entry and rule.pattern not in scored:
                raise At(
                    ("profiles", i, "pattern"),
                    f"profile {rule.id!r} steers toward {rule.pattern!r}, which no entry is "
                    "scored for, so the study cannot tell whether steering worked"
                    f"{FIX_MARK}add {rule.pattern!r} to [scores].patterns (or patterns = "
                    '"all"), with "pattern" in [scores].entry',
                )
        self.check_hypotheses(list(self.cast.profiles))
        return self
