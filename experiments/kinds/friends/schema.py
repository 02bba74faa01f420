"""The friends kind's design tables, on top of the tables every design has: [pairs] (which role
cards meet, in which seats and writing orders), [conditions] (the steered profiles whose every
ordered pair is a condition, and the controls), [outcome] and its own [analysis] and
[[hypotheses]]. `[design].entries` is the number of letters each writer writes. A friends design
has no chatbots: the friends write to each other."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import Field, field_validator, model_validator

from diarylab.diarists.cards import available_cards
from diarylab.diarists.patterns import available_patterns
from diarylab.experiments.analysis.rules import TestedAnalysis
from diarylab.experiments.analysis.verdicts import MIN_CLUSTERS
from diarylab.experiments.engine.design import UNSTEERED, DesignFile
from diarylab.experiments.engine.writing_design import WritingDesignFile
from diarylab.experiments.kinds.friends.contrast import FriendsHypothesis
from diarylab.foundation.datafiles import FIX_MARK, At, DataModel, NonEmpty, Slug

Control = Literal["two_unsteered", "fixed_friend"]
CONTROLS: tuple[Control, ...] = ("two_unsteered", "fixed_friend")


class Pairs(DataModel):
    """Seat B's card is seat A's card moved on by a shift (in the order of `cards`), so each
    shift seats every card once in seat A and once in seat B; shifts in `a_first` have seat A
    write first, those in `b_first` seat B. Equal lists balance every card over seats × orders."""

    cards: list[Slug] | Literal["all"] = Field(
        "all", description='role-card ids in the order shifts count them, or "all"'
    )
    a_first: list[int] = Field(
        [1, 2], min_length=1, description="shifts whose pairs have seat A write the first letter"
    )
    b_first: list[int] = Field(
        [3, 4], min_length=1, description="shifts whose pairs have seat B write the first letter"
    )

    @model_validator(mode="after")
    def _balanced(self) -> Pairs:
        known = available_cards()
        if self.cards != "all":
            for i, card in enumerate(self.cards):
                if card not in known:
                    raise At(
                        ("cards", i),
                        f"unknown role card {card!r}{FIX_MARK}choose from {', '.join(known)} "
                        'or write "all"',
                    )
            if len(set(self.cards)) != len(self.cards):
                raise At(("cards",), f"a role card is listed twice{FIX_MARK}list each once")
            if len(self.cards) < 2:
                raise At(("cards",), f"one card cannot write to a friend{FIX_MARK}list two or more")
        n = len(self.card_ids)
        for name in ("a_first", "b_first"):
            shifts: list[int] = getattr(self, name)
            for i, shift in enumerate(shifts):
                if not 1 <= shift < n:
                    raise At(
                        (name, i),
                        f"shift {shift} is outside 1..{n - 1} ({n} cards; 0 would seat a card "
                        f"with itself){FIX_MARK}use shifts from 1 to {n - 1}",
                    )
            if len(set(shifts)) != len(shifts):
                raise At((name,), f"a shift is listed twice{FIX_MARK}list each shift once")
        if len(self.a_first) != len(self.b_first):
            raise At(
                ("b_first",),
                f"{len(self.a_first)} shift(s) write first from seat A but {len(self.b_first)} "
                f"from seat B, so cards are not balanced over writing orders{FIX_MARK}give "
                "a_first and b_first the same number of shifts",
            )
        return self

    @property
    def card_ids(self) -> list[str]:
        return available_cards() if self.cards == "all" else list(self.cards)


class Conditions(DataModel):
    steered: list[NonEmpty] = Field(
        min_length=1,
        description="steered profiles (inline [[profiles]] ids or profile files); every ordered "
        "pair of them for the two seats is a condition",
    )
    controls: list[Control] = Field(
        list(CONTROLS),
        description="two_unsteered: two unsteered friends; fixed_friend: a steered writer whose "
        "friend's letters are the fixed content-free letter",
    )

    @model_validator(mode="after")
    def _once(self) -> Conditions:
        for name in ("steered", "controls"):
            values = getattr(self, name)
            if len(set(values)) != len(values):
                raise At((name,), f"an entry is listed twice{FIX_MARK}list each once")
        for i, ref in enumerate(self.steered):
            if ref == UNSTEERED:
                raise At(
                    ("steered", i),
                    f"'unsteered' is not a steered profile{FIX_MARK}the two_unsteered control "
                    "gives unsteered pairs; list steered profiles here",
                )
        return self


class Outcome(DataModel):
    letters: list[int] = Field(
        [2, 3],
        min_length=1,
        description="each writer's letters the primary outcome averages (not the noisy first)",
    )


LetterScore = Literal["pattern", "coherence"]


class LetterScores(DataModel):
    """What every judge scores every model-written letter for; the identity check is always
    asked. The preregistration scores every pattern and coherence (the defaults)."""

    letter: list[LetterScore] = Field(
        ["pattern", "coherence"],
        min_length=1,
        description='what every letter is scored for: "pattern", "coherence" (0–100 each)',
    )
    patterns: list[Slug] | Literal["all"] = Field(
        "all", description='patterns every letter gets a score for, or "all"'
    )

    @model_validator(mode="after")
    def _known(self) -> LetterScores:
        if len(set(self.letter)) != len(self.letter):
            raise At(("letter",), f"a score is listed twice{FIX_MARK}list each once")
        if self.patterns != "all":
            known = available_patterns()
            for i, pattern in enumerate(self.patterns):
                if pattern not in known:
                    raise At(
                        ("patterns", i),
                        f"unknown pattern {pattern!r}{FIX_MARK}choose from {', '.join(known)} "
                        'or write "all"',
                    )
            if len(set(self.patterns)) != len(self.patterns):
                raise At(("patterns",), f"a pattern is listed twice{FIX_MARK}list each once")
        return self

    @property
    def pattern_ids(self) -> list[str]:
        if "pattern" not in self.letter:
            return []
        return available_patterns() if self.patterns == "all" else list(self.patterns)


class FriendsAnalysis(TestedAnalysis):
    cluster: Literal["role_card"] = Field(
        "role_card", description="the unit of every interval and test: the writer's role card"
    )

    @property
    def cluster_column(self) -> str:
        """The column of the letter and outcome tables that holds the cluster."""
        return {"role_card": "card"}[self.cluster]

    min_role_cards: int = Field(
        MIN_CLUSTERS,
        ge=2,
        le=100_000,
        description="fewer role cards than this give a hypothesis no verdict",
    )

    @property
    def min_clusters(self) -> int:
        return self.min_role_cards


class FriendsDesignFile(WritingDesignFile):
    judging_fields: ClassVar[tuple[str, ...]] = (
        *DesignFile.judging_fields,
        "scores",
        "outcome",
        "hypotheses",
    )
    compared_apart: ClassVar[tuple[str, ...]] = ("conditions.steered",)

    pairs: Pairs = Field(
        Pairs(), description="[pairs]: which role cards meet, and in which seats and writing orders"
    )
    conditions: Conditions = Field(
        description="[conditions]: the steered friends' profiles and the control conditions"
    )
    outcome: Outcome = Field(Outcome(), description="[outcome]: which letters the outcome averages")
    scores: LetterScores = Field(
        LetterScores(), description="[scores]: what letters are scored for and which patterns"
    )
    analysis: FriendsAnalysis = Field(
        FriendsAnalysis(),
        description="[analysis]: bootstrap resamples, cluster, minimum role cards and decision "
        "rule",
    )
    hypotheses: list[FriendsHypothesis] = Field(
        [], description="[[hypotheses]]: the preregistered outcome contrasts and their directions"
    )

    def preregistered(self) -> list[FriendsHypothesis]:
        return self.hypotheses

    @field_validator("chatbots", mode="before")
    @classmethod
    def _no_chatbots(cls, value: Any) -> Any:
        if value:
            raise ValueError(
                f"a friends design has no chatbots: the friends write to each other"
                f"{FIX_MARK}remove the [[chatbots]] tables"
            )
        return value

    @model_validator(mode="after")
    def _profiles_outcome_hypotheses(self) -> FriendsDesignFile:
        inline = {p.id for p in self.profiles}
        for i, ref in enumerate(self.conditions.steered):
            if ref not in inline and not ref.endswith(".toml"):
                raise At(
                    ("conditions", "steered", i),
                    f"{ref!r} is neither an inline profile nor a profile file{FIX_MARK}add a "
                    f"[[profiles]] rule with id = {ref!r}, or give a path to a profile .toml",
                )
        unused = inline - set(self.conditions.steered)
        if unused:
            raise ValueError(
                f"inline profile(s) {', '.join(sorted(unused))} are not in conditions.steered"
                f"{FIX_MARK}list them in conditions.steered or remove them"
            )
        letters = self.design.entries
        for i, k in enumerate(self.outcome.letters):
            if not 1 <= k <= letters:
                raise At(
                    ("outcome", "letters", i),
                    f"letter {k} is past the {letters} each writer writes (design.entries)"
                    f"{FIX_MARK}use letters from 1 to {letters}",
                )
        if len(set(self.outcome.letters)) != len(self.outcome.letters):
            raise At(("outcome", "letters"), f"a letter is listed twice{FIX_MARK}list each once")
        self.check_hypotheses(list(self.conditions.steered))
        # A steered pattern left out of a list of scored patterns: the study could not tell
        # whether steering worked (the diary refuses the same).
        if "pattern" in self.scores.letter and self.scores.patterns != "all":
            for i, rule in enumerate(self.profiles):
                if rule.pattern not in self.scores.patterns:
                    raise At(
                        ("profiles", i, "pattern"),
                        f"profile {rule.id!r} steers toward {rule.pattern!r}, which no letter "
                        "is scored for, so the study cannot tell whether steering worked"
                        f"{FIX_MARK}add {rule.pattern!r} to [scores].patterns (or patterns = "
                        '"all")',
                    )
        return self

    def check_hypotheses(self, profile_ids: list[str]) -> None:
        """Every name a hypothesis uses exists; as for the diary, profile files' ids are taken on
        trust until the files are read, and this runs again with their ids."""
        steered = {p for p in profile_ids if p != UNSTEERED}
        if any(p.endswith(".toml") for p in steered):
            named = {
                g.writer for h in self.hypotheses for g in (h.contrast.of, h.contrast.against)
            } | {g.friend for h in self.hypotheses for g in (h.contrast.of, h.contrast.against)}
            steered = {p for p in steered if not p.endswith(".toml")} | named
        for h in self.hypotheses:
            h.check_names(
                judges=[j.id for j in self.judges],
                steered=steered,
                patterns=self.scores.pattern_ids,
                controls=self.conditions.controls,
            )
