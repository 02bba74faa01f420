"""Patterns: a named psychological pattern with the definition a judge reads, the contrast set a
steering vector is extracted from, and held-out prompts for calibration. Data lives in
diarists/patterns/<id>.toml, read through the Pattern schema (one model per table)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from pydantic import (
    Field,
    StringConstraints,
    ValidationInfo,
    field_validator,
    model_validator,
)

from diarylab.diarists.cards import same_as_file_name
from diarylab.foundation.datafiles import DataModel, HashedDataFile, NonEmpty
from diarylab.foundation.errors import LabError

PATTERNS_DIR = Path(__file__).parent / "patterns"
MIN_PROMPTS = 20  # per set: fewer makes the mean difference (and the calibration) too noisy

Text = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)]
Prompts = Annotated[tuple[NonEmpty, ...], Field(strict=False, min_length=MIN_PROMPTS)]
Marker = Annotated[str, StringConstraints(pattern=r"\S", to_lower=True)]


class PatternHead(DataModel):
    id: str
    version: int
    name: Text
    definition: Text

    @field_validator("id")
    @classmethod
    def _id_is_the_file_name(cls, value: str, info: ValidationInfo) -> str:
        return same_as_file_name("pattern", value, info)


class Contrast(DataModel):
    positive_system: Text  # a diarist who has the pattern
    negative_system: Text  # a healthy diarist, otherwise alike

    @model_validator(mode="after")
    def _differ(self) -> Contrast:
        if self.positive_system == self.negative_system:
            raise ValueError(
                "positive_system and negative_system are the same text — fix: the contrast "
                "needs a diarist with the pattern and one without"
            )
        return self


class Evaluation(DataModel):
    system: Text  # a plain diarist, for held-out calibration entries


class PromptSets(DataModel):
    extraction: Prompts
    heldout: Prompts

    @model_validator(mode="after")
    def _heldout_is_new(self) -> PromptSets:
        shared = sorted(set(self.extraction) & set(self.heldout))
        if shared:
            raise ValueError(
                f"{len(shared)} prompt(s) are in both extraction and heldout, e.g. {shared[0]!r}"
                " — fix: held-out prompts must be new to the vector: remove them from one list"
            )
        return self


class Heuristic(DataModel):
    markers: Annotated[tuple[Marker, ...], Field(strict=False)] = ()  # lower-cased


class Pattern(HashedDataFile):
    """A whole pattern file; `sha256` and `path` are those of the file it was read from."""

    pattern: PatternHead
    contrast: Contrast
    evaluation: Evaluation
    prompts: PromptSets
    heuristic: Heuristic = Heuristic()  # for the demo heuristic scorer only; not a judge

    @property
    def id(self) -> str:
        return self.pattern.id

    @property
    def version(self) -> int:
        return self.pattern.version

    @property
    def name(self) -> str:
        return self.pattern.name

    @property
    def definition(self) -> str:
        return self.pattern.definition

    @property
    def positive_system(self) -> str:
        return self.contrast.positive_system

    @property
    def negative_system(self) -> str:
        return self.contrast.negative_system

    @property
    def eval_system(self) -> str:
        return self.evaluation.system

    @property
    def extraction_prompts(self) -> tuple[str, ...]:
        return self.prompts.extraction

    @property
    def heldout_prompts(self) -> tuple[str, ...]:
        return self.prompts.heldout

    @property
    def markers(self) -> tuple[str, ...]:
        return self.heuristic.markers


def available_patterns(folder: Path = PATTERNS_DIR) -> list[str]:
    return sorted(p.stem for p in folder.glob("*.toml"))


def load_pattern(id_or_path: str | Path, folder: Path = PATTERNS_DIR) -> Pattern:
    """A shipped pattern by id, or any pattern file by path."""
    path = Path(id_or_path)
    if path.suffix != ".toml":
        known = available_patterns(folder)
        if str(id_or_path) not in known:
            raise LabError(
                f"unknown pattern {str(id_or_path)!r}",
                where="pattern",
                fix=f"choose from {', '.join(known)} or give a path to a pattern .toml file",
            )
        path = folder / f"{id_or_path}.toml"
    return Pattern.from_file(path, context={"path": path})
