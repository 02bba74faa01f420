"""Yes/no questions read by probability: P(yes) renormalised over the yes and no variants.

A variant is a single token whose text, after at most one leading space, is "yes" or "no" in any
case ("Yes", " yes", "NO", "▁No" ...). Multi-token spellings are not counted: templates end so
the answer is one token. coverage = P(any yes variant) + P(any no variant); below the floor the
reading is unreadable (p_yes None)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from diarylab.foundation.errors import LabError
from diarylab.rubric.judging.expected import DEFAULT_FLOOR, ReadingSummary, prob
from diarylab.rubric.prompts import TemplateRef

SPACE_MARKERS = ("Ġ", "▁", " ")  # how byte-level BPE, SentencePiece and plain text write a space
YES_NO = ("yes", "no")


def answer_of(token_text: str, words: tuple[str, str] = YES_NO) -> str | None:
    """'yes' / 'no' if the token is a variant of that answer, else None. Other answer words
    (a JSON answer's "true"/"false") read the same way: the first word counts as yes."""
    text = token_text
    for marker in SPACE_MARKERS:
        if text.startswith(marker):
            text = text[len(marker) :]
            break
    word = text.lower()
    if word == words[0]:
        return "yes"
    return "no" if word == words[1] else None


@dataclass(frozen=True)
class YesNoReading:
    p_yes: float | None  # P(yes) / (P(yes) + P(no)); None when unreadable
    yes_mass: float  # raw P(any yes variant)
    no_mass: float
    coverage: float
    readable: bool
    floor: float
    record: Mapping[str, Any]
    template: TemplateRef | None = None

    @property
    def exact(self) -> bool:
        return bool(self.record.get("exact", True))

    def to_record(self) -> dict[str, Any]:
        return TemplateRef.attach(self.record, self.template)

    @staticmethod
    def from_record(record: Mapping[str, Any], *, floor: float = DEFAULT_FLOOR) -> YesNoReading:
        _check_kind(record)
        raw, template = TemplateRef.split(record)
        reading = yes_no_reading(raw["yes"], raw["no"], floor=floor, record=raw)
        return reading if template is None else replace(reading, template=template)


def yes_no_summary(record: Mapping[str, Any], *, floor: float = DEFAULT_FLOOR) -> ReadingSummary:
    """P(yes), coverage and readability as YesNoReading.from_record gives them, without copying
    and sorting the record (a judgment row needs only these)."""
    _check_kind(record)
    yes_mass, no_mass, coverage, readable = _masses(record["yes"], record["no"], floor)
    return ReadingSummary(yes_mass / coverage if readable else None, coverage, readable)


def _check_kind(record: Mapping[str, Any]) -> None:
    if record.get("kind") != "yes_no":
        raise LabError(f"not a yes/no record (kind={record.get('kind')!r})", where="record")


def _masses(
    yes: Mapping[str, float], no: Mapping[str, float], floor: float
) -> tuple[float, float, float, bool]:
    yes_mass = sum(prob(v) for v in yes.values())
    no_mass = sum(prob(v) for v in no.values())
    coverage = yes_mass + no_mass
    return yes_mass, no_mass, coverage, coverage >= floor and coverage > 0


def yes_no_reading(
    yes: Mapping[str, float],
    no: Mapping[str, float],
    *,
    floor: float = DEFAULT_FLOOR,
    record: Mapping[str, Any] | None = None,
) -> YesNoReading:
    """From log-probabilities of the yes variants and the no variants (token text -> log-prob)."""
    yes_mass, no_mass, coverage, readable = _masses(yes, no, floor)
    base = dict(record or {})
    base.setdefault("kind", "yes_no")
    base["yes"] = dict(sorted(yes.items()))
    base["no"] = dict(sorted(no.items()))
    base.setdefault("exact", True)
    return YesNoReading(
        p_yes=yes_mass / coverage if readable else None,
        yes_mass=yes_mass,
        no_mass=no_mass,
        coverage=coverage,
        readable=readable,
        floor=floor,
        record=base,
    )
