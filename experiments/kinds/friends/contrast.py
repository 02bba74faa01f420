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

from foundation.datafiles import FIX_MARK, DataModel, NonEmpty, Slug
from foundation.errors import LabError

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
    kind: Literal["outcome"]
    score: Slug = Field(description="the pattern whose score is the outcome")
    of: WriterGroup
    against: WriterGroup

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


class FriendsHypothesis(DataModel):
    """One [[hypotheses]] table of a friends design."""

    id: Slug
    says: NonEmpty = Field(description="the hypothesis in words")
    direction: Literal["greater", "less"] = Field(description="the predicted sign of the contrast")
    judges: list[Slug] = Field(
        min_length=1, description="every judge id of the design; all must give the same verdict"
    )
    contrast: OutcomeContrast

    @model_validator(mode="after")
    def _judges_once(self) -> FriendsHypothesis:
        if len(set(self.judges)) != len(self.judges):
            raise ValueError(f"a judge is listed twice{FIX_MARK}list each judge once")
        return self

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
        judge_ids, profiles, controls = set(judges), set(steered), set(controls)
        for judge in self.judges:
            _known("judge", judge, judge_ids, f"{at}.judges")
        left_out = sorted(judge_ids - set(self.judges))
        if left_out:
            raise UnknownName(
                f"leaves out judge {left_out[0]!r}: every judge of the design must agree",
                where=f"{at}.judges",
                fix=f"list every judge of the design ({', '.join(sorted(judge_ids))})",
            )
        _known("pattern", self.contrast.score, set(patterns), f"{at}.contrast.score")
        for side in ("of", "against"):
            group: WriterGroup = getattr(self.contrast, side)
            _known("writer", group.writer, profiles | set(WRITER_WORDS), f"{at}.contrast.{side}")
            _known("friend", group.friend, profiles | set(FRIEND_WORDS), f"{at}.contrast.{side}")
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


class UnknownName(LabError, ValueError):
    """A hypothesis naming something its design lacks."""


def _known(what: str, name: str, known: set[str], where: str) -> None:
    if name not in known:
        raise UnknownName(
            f"unknown {what} {name!r}",
            where=where,
            fix=f"name one of {', '.join(sorted(known)) or '(none defined)'}",
        )
