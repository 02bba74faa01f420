"""The rating form: the questions a person answers about each item, in the judges' own words
(the same template and rubric files the judges were asked from), under keys that say nothing
about the run (q01, q02, ...) so a sheet shows no pattern or profile id."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import Any, Literal

from diarylab.diarists.patterns import load_pattern
from diarylab.experiments.rating.sheet_text import sheet_text
from diarylab.foundation.errors import LabError
from diarylab.rubric.behavior_rubric import load_behavior_rubric
from diarylab.rubric.prompts import Template, load_template

Scale = Literal["number", "yes_no"]
TargetKind = Literal["entry", "reply"]
_SENTINEL = "\u0000ENTRY\u0000"


@dataclass(frozen=True)
class RatingQuestion:
    key: str  # "q01": what a sheet and an answer file name the question by
    item: str  # the judges' item it mirrors: "coherence", "pattern:<id>", "person:risk", ...
    target: TargetKind
    scale: Scale
    wording: str  # what the rater reads

    def to_record(self) -> dict[str, Any]:
        return asdict(self)

    @staticmethod
    def from_record(record: dict[str, Any]) -> RatingQuestion:
        return RatingQuestion(**record)


def _number_words(template: Template, **values: str) -> str:
    """A 0–100 template's words with the entry itself replaced by a pointer to it."""
    text = template.user.format(entry=_SENTINEL, **values)
    marker = sheet_text().entry_marker
    for block in (f"<entry>\n{_SENTINEL}\n</entry>", _SENTINEL):
        text = text.replace(block, marker)
    return text.strip()


def _question(item: str, target: TargetKind) -> tuple[Scale, str]:
    rubric = load_behavior_rubric()
    if item in ("coherence", "realism"):
        return "number", _number_words(load_template(item))
    if item.startswith("pattern:"):
        pattern = load_pattern(item.removeprefix("pattern:"))
        words = _number_words(
            load_template("pattern"),
            pattern_name=pattern.name,
            pattern_definition=pattern.definition,
        )
        return "number", words
    if item.startswith("person:"):
        person = {p.id: p.question for p in rubric.person}
        if item.removeprefix("person:") in person:
            return "yes_no", person[item.removeprefix("person:")]
    reply = {q.id: q.question for q in rubric.questions}
    if target == "reply" and item in reply:
        return "yes_no", reply[item]
    raise LabError(
        f"the judges read an item the rating form cannot ask: {item!r} of a {target}",
        where="rate sample",
        fix="rate a diary run judged with the lab's own templates and rubric",
    )


def _order(item: str) -> tuple[int, str]:
    rank = 0 if item.startswith("pattern:") else 1 if item in ("coherence", "realism") else 2
    return rank, item


def rating_form(entry_items: Iterable[str], reply_items: Iterable[str]) -> list[RatingQuestion]:
    """Every question of the form: an entry's items (scores first, then the person questions),
    then a reply's in the rubric's order."""
    rubric_order = [q.id for q in load_behavior_rubric().questions]
    entries = sorted(set(entry_items), key=_order)
    replies = sorted(
        set(reply_items), key=lambda i: rubric_order.index(i) if i in rubric_order else 1_000
    )
    out: list[RatingQuestion] = []
    for target, items in (("entry", entries), ("reply", replies)):
        for item in items:
            scale, words = _question(item, target)  # type: ignore[arg-type]
            out.append(RatingQuestion(f"q{len(out) + 1:02d}", item, target, scale, words))  # type: ignore[arg-type]
    return out


def form_sha256(form: Iterable[RatingQuestion]) -> str:
    """The hash of the form's every word and of the sheet's instructions: a file answered on
    another form is refused on import."""
    payload = {"sheet": sheet_text().sha256, "form": [q.to_record() for q in form]}
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()
