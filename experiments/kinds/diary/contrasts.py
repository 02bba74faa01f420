"""The hypothesis schema: a preregistered hypothesis as a typed table, its contrast a tagged
union on `kind` (the whole contrast language), and the checks of the names it uses. Evaluation
lives in experiments/kinds/diary/hypotheses.py."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Annotated, Any, Literal, get_args

from pydantic import (
    AfterValidator,
    BeforeValidator,
    Field,
    ValidationInfo,
    field_validator,
    model_validator,
)

from diarylab.diarists.profiles import UNSTEERED_ID as UNSTEERED
from diarylab.experiments.analysis.hypotheses import (
    HypothesisHead,
    UnknownName,
    as_tuple,
    known,
    unique_ids,
)
from diarylab.experiments.engine.design import with_design_judges
from diarylab.foundation.datafiles import FIX_MARK, DataModel, Slug, validate

STEERED = "steered"  # in a contrast's profile: every steered profile of the design, pooled
MINUS = "\N{MINUS SIGN}"
Kind = Literal[
    "first_entry_pattern", "drift", "drift_change", "steered_vs_baseline", "coherence", "realism"
]
SUPPORTED_CONTRASTS = (
    '{ kind = "first_entry_pattern", profile = "steered" | P }',
    '{ kind = "coherence", profile = "steered" | P }',
    '{ kind = "realism", profile = "steered" | P }',
    '{ kind = "drift", chatbot = X[, entry = K][, profile = "steered" | P][, baseline = B] }',
    '{ kind = "drift_change", chatbot = X[, entry = K][, profile = "steered" | P]'
    "[, baseline = B] }",
    '{ kind = "steered_vs_baseline", chatbot = X, baseline = B[, entry = K]'
    '[, profile = "steered" | P] }',
)
_FORMS = "; ".join(SUPPORTED_CONTRASTS)


def _not_unsteered(profile: str) -> str:
    if profile == UNSTEERED:
        raise ValueError(
            f"'unsteered' is the twin every contrast is read against, not a side of it{FIX_MARK}"
            'name a steered profile id, or "steered" for all steered profiles pooled'
        )
    return profile


ContrastProfile = Annotated[
    Slug,
    AfterValidator(_not_unsteered),
    Field(description='a steered profile id, or "steered": every steered profile, pooled'),
]


class SteeringContrast(DataModel):
    """A score of the steered profile minus the same diarist's unsteered twin: the first-entry
    pattern score (the profile's own pattern), or coherence / realism over all entries."""

    kind: Literal["first_entry_pattern", "coherence", "realism"] = Field(
        description='"first_entry_pattern", "coherence" or "realism": the score compared, steered '
        "minus unsteered"
    )
    profile: ContrastProfile = STEERED

    @property
    def profile_id(self) -> str | None:
        """The one profile compared, or None when the steered profiles are pooled."""
        return None if self.profile == STEERED else self.profile

    def formula(self) -> str:
        side = STEERED if self.profile == STEERED else f"profile={self.profile}"
        return f"{self.kind}({side}) {MINUS} {self.kind}({UNSTEERED})"


class DriftContrast(DataModel):
    """A contrast over the conversation, per diarist, for one chatbot at one entry k (default:
    the mean over entries 2 onward), on the profile's own-pattern score (S steered, U the same
    diarist unsteered, both under the chatbot):

    - drift: the level of the gap, S(k) − U(k); with a baseline, minus the baseline chatbot's
      gap at the same entry.
    - drift_change: the gap's change since the shared first entry,
      Δk = [S(k) − U(k)] − [S(1) − U(1)]; with a baseline, Δk(chatbot) − Δk(baseline): the
      difference in differences (what the replies did beyond the diarist being answered).
    - steered_vs_baseline: the steered score under the chatbot minus the steered score under
      the baseline chatbot, same diarist and entry: S_chatbot(k) − S_baseline(k)."""

    kind: Literal["drift", "drift_change", "steered_vs_baseline"] = Field(
        description='"drift", "drift_change" or "steered_vs_baseline": what the replies did over '
        "the conversation"
    )
    chatbot: Slug = Field(description="the chatbot whose replies the diarist read")
    entry: int | None = Field(
        None, ge=2, description="entry number (2 onward); default: the mean over entries 2 onward"
    )
    profile: ContrastProfile = STEERED
    baseline: Slug | None = Field(
        None, description='a chatbot compared against, e.g. the fixed-reply "thanks"'
    )

    @field_validator("baseline")
    @classmethod
    def _baseline_differs(cls, baseline: str | None, info: ValidationInfo) -> str | None:
        if baseline is not None and baseline == info.data.get("chatbot"):
            raise ValueError(
                f"baseline {baseline!r} is the chatbot itself, so the contrast is zero by "
                f"construction{FIX_MARK}name another chatbot as baseline, or leave baseline out"
            )
        return baseline

    @model_validator(mode="after")
    def _baseline_given(self) -> DriftContrast:
        if self.kind == "steered_vs_baseline" and self.baseline is None:
            raise ValueError(
                f"steered_vs_baseline compares the chatbot with a baseline, but none is given"
                f'{FIX_MARK}add baseline = "<chatbot id>", e.g. the fixed-reply "thanks"'
            )
        return self

    @property
    def profile_id(self) -> str | None:
        """The one profile compared, or None when the steered profiles are pooled."""
        return None if self.profile == STEERED else self.profile

    def formula(self) -> str:
        name = {"drift": "drift", "drift_change": "drift_change", "steered_vs_baseline": "steered"}

        def term(chatbot: str) -> str:
            args = [f"chatbot={chatbot}"]
            args += [f"entry={self.entry}"] if self.entry is not None else []
            args += [f"profile={self.profile}"] if self.profile != STEERED else []
            return f"{name[self.kind]}({', '.join(args)})"

        if self.baseline is None:
            return term(self.chatbot)
        return f"{term(self.chatbot)} {MINUS} {term(self.baseline)}"


Contrast = Annotated[SteeringContrast | DriftContrast, Field(discriminator="kind")]


class Hypothesis(HypothesisHead):
    """One [[hypotheses]] table of a diary design."""

    contrast: Contrast = Field(
        description="what is compared: a steering contrast (kind first_entry_pattern, coherence, "
        "realism) or a drift contrast"
    )

    def formula(self) -> str:
        return self.contrast.formula()

    @field_validator("contrast", mode="before")
    @classmethod
    def _a_table_with_a_kind(cls, value: Any) -> Any:
        if isinstance(value, str):
            raise ValueError(
                f"contrast {value!r} is a formula; a contrast is a table now{FIX_MARK}write "
                f"one of {_FORMS}"
            )
        if isinstance(value, Mapping) and "kind" not in value:
            kinds = ", ".join(repr(k) for k in get_args(Kind))
            raise ValueError(f"contrast has no kind{FIX_MARK}add kind = one of {kinds}")
        return value

    def check_names(
        self,
        judges: Iterable[str],
        profiles: Iterable[str],
        chatbots: Iterable[str],
        *,
        entries: int | None = None,
        where: str | None = None,
    ) -> None:
        """Refuse a judge, profile or chatbot the design does not have, a judge of the design
        left out (and, given the design's number of entries, an entry past the last) with an
        UnknownName (a LabError, and a
        ValueError for use inside a schema validator). `profiles` are profile ids ('unsteered'
        may be among them); 'steered' needs at least one steered profile. `where` names the
        hypothesis in the error (default: 'hypothesis <id>')."""
        at = where or f"hypothesis {self.id}"
        chatbot_ids = set(chatbots)
        steered = sorted(set(profiles) - {UNSTEERED})
        self.check_judges(judges, at)
        c = self.contrast
        if c.profile == STEERED and not steered:
            raise UnknownName(
                "the contrast pools the steered profiles, but the design has none",
                where=f"{at}.contrast.profile",
                fix="add a steered profile to the design's profiles",
            )
        if c.profile != STEERED and c.profile not in steered:
            options = ", ".join([*steered, STEERED]) if steered else "(none: add one first)"
            raise UnknownName(
                f"unknown profile {c.profile!r}",
                where=f"{at}.contrast.profile",
                fix=f"name one of {options} (profile ids; 'steered' pools them all)",
            )
        if isinstance(c, DriftContrast):
            known("chatbot", c.chatbot, chatbot_ids, f"{at}.contrast.chatbot")
            if c.baseline is not None:
                known("chatbot", c.baseline, chatbot_ids, f"{at}.contrast.baseline")
            if entries is not None and c.entry is not None and c.entry > entries:
                raise UnknownName(
                    f"entry {c.entry} is past the design's last entry ({entries})",
                    where=f"{at}.contrast.entry",
                    fix=f"use an entry from 2 to {entries}, or leave entry out",
                )


# What a design embeds: `hypotheses: Hypotheses = ()`.
Hypotheses = Annotated[
    tuple[Hypothesis, ...], BeforeValidator(as_tuple), AfterValidator(unique_ids)
]


class _DesignHypotheses(DataModel):
    hypotheses: Hypotheses = ()


def parse_hypotheses(design: Mapping[str, Any], where: str = "design") -> tuple[Hypothesis, ...]:
    """The design's [[hypotheses]], validated (schema, ids unique). Names are checked against
    the design by Hypothesis.check_names, and against a run's data by `evaluate`."""
    data = {"hypotheses": with_design_judges(design).get("hypotheses", [])}
    return validate(_DesignHypotheses, data, where).hypotheses
