"""The diary experiment's design tables: [cast] (diarists and profiles) and [scores] (what every
entry is scored for), on top of the tables every design has."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from diarists.cards import available_cards
from diarists.patterns import available_patterns
from experiments.analysis.projection import JUDGE as PROJECTION
from experiments.design import UNSTEERED, DesignFile
from foundation.datafiles import FIX_MARK, At, DataModel, NonEmpty, Slug

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
    entry: list[EntryScore] = Field(list(ENTRY_SCORES), min_length=1)
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


class DiaryDesignFile(DesignFile):
    cast: Cast
    scores: Scores = Scores()

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
        self.check_hypotheses(list(self.cast.profiles))
        return self
