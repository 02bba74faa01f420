"""The friends kind's hypotheses: a preregistered contrast between two groups of writers on the
primary outcome (a writer's mean score for one pattern over their outcome letters), with a
predicted direction and the judges that must agree. The whole contrast language:

    contrast = { kind = "outcome", score = "entitlement",
                 of = { writer = "other", friend = "entitlement" },
                 against = { writer = "other", friend = "fixed" } }

A group selects writers by their own profile and their friend's:
  writer: a steered profile id, "unsteered", "steered" (any steered profile) or "other" (a
          steered writer whose pattern is not the score's pattern);
  friend: a steered profile id, "unsteered", "steered" or "fixed" (the fixed letter).
The contrast is computed per role card (the cluster): the card's writers in `of` minus its
writers in `against`."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

from pydantic import Field, model_validator

from diarylab.experiments.analysis.hypotheses import HypothesisHead, UnknownName, known
from diarylab.foundation.datafiles import FIX_MARK, DataModel, Slug

MINUS = "\N{MINUS SIGN}"
UNSTEERED = "unsteered"
STEERED = "steered"
OTHER = "other"  # writer: steered, toward another pattern than the score's
FIXED = "fixed"  # friend: the fixed content-free letter
WRITER_WORDS = (UNSTEERED, STEERED, OTHER)
FRIEND_WORDS = (UNSTEERED, STEERED, FIXED)


class WriterGroup(DataModel):
    writer: Slug = Field(description='a steered profile id, "unsteered", "steered" or "other"')
    friend: Slug = Field(description='a steered profile id, "unsteered", "steered" or "fixed"')

    def label(self) -> str:
        return f"writer={self.writer}, friend={self.friend}"


class OutcomeContrast(DataModel):
    kind: Literal["outcome"] = Field(
        description='"outcome": a writer\'s mean pattern score over the outcome letters'
    )
    score: Slug = Field(description="the pattern whose score is the outcome")
    of: WriterGroup = Field(
        description="the writers whose outcome is measured (their profile and their friend's)"
    )
    against: WriterGroup = Field(
        description="the writers it is compared with (e.g. the same writer beside the fixed friend)"
    )

    @model_validator(mode="after")
    def _two_groups(self) -> OutcomeContrast:
        if self.of == self.against:
            raise ValueError(
                f"of and against select the same writers, so the contrast is zero by "
                f"construction{FIX_MARK}change one of the two groups"
            )
        return self

    def formula(self) -> str:
        return (
            f"outcome[{self.score}]({self.of.label()}) {MINUS} "
            f"outcome[{self.score}]({self.against.label()})"
        )


class FriendsHypothesis(HypothesisHead):
    """One [[hypotheses]] table of a friends design: the shared head plus an outcome contrast."""

    contrast: OutcomeContrast = Field(description="the outcome contrast tested: of minus against")

    def formula(self) -> str:
        return self.contrast.formula()

    def check_names(
        self,
        *,
        judges: Iterable[str],
        steered: Iterable[str],
        patterns: Iterable[str],
        controls: Iterable[str],
    ) -> None:
        """Refuse a judge, profile, pattern or control the design lacks (a LabError that is also
        a ValueError, so inside a schema validator it becomes the file's one-line error)."""
        at = f"hypothesis {self.id}"
        profiles, controls = set(steered), set(controls)
        self.check_judges(judges, at)
        known("pattern", self.contrast.score, set(patterns), f"{at}.contrast.score")
        for side in ("of", "against"):
            group: WriterGroup = getattr(self.contrast, side)
            known("writer", group.writer, profiles | set(WRITER_WORDS), f"{at}.contrast.{side}")
            known("friend", group.friend, profiles | set(FRIEND_WORDS), f"{at}.contrast.{side}")
            if UNSTEERED in (group.writer, group.friend) and "two_unsteered" not in controls:
                raise UnknownName(
                    "selects unsteered writers, but the design has no two_unsteered control",
                    where=f"{at}.contrast.{side}",
                    fix='add "two_unsteered" to conditions.controls',
                )
            if group.friend == FIXED and "fixed_friend" not in controls:
                raise UnknownName(
                    "selects the fixed-letter friend, but the design has no fixed_friend control",
                    where=f"{at}.contrast.{side}",
                    fix='add "fixed_friend" to conditions.controls',
                )
            if (group.writer == UNSTEERED) != (group.friend == UNSTEERED):
                raise UnknownName(
                    f"no condition pairs {group.writer!r} with {group.friend!r}: unsteered "
                    "writers only write to unsteered friends (the two_unsteered control)",
                    where=f"{at}.contrast.{side}",
                    fix='write writer = "unsteered", friend = "unsteered" together',
                )
