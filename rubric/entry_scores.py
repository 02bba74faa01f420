"""Per-entry scores: pattern (one per pattern asked), coherence and realism, each a 0–100 reading
from a versioned template. Patterns come in as plain strings (id, name, definition) so rubric/
does not depend on diarists/."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from diarylab.foundation.errors import LabError
from diarylab.rubric.judging.expected import DEFAULT_FLOOR
from diarylab.rubric.judging.judge_base import Judge
from diarylab.rubric.judging.number_reading import NumberReading
from diarylab.rubric.prompts import JudgePrompt, Template, load_template, text_sha256

PatternSpec = tuple[str, str, str]  # (id, name, definition)


@dataclass(frozen=True)
class EntryTemplates:
    pattern: Template
    coherence: Template
    realism: Template

    @staticmethod
    def load() -> EntryTemplates:
        return EntryTemplates(
            load_template("pattern"), load_template("coherence"), load_template("realism")
        )


@dataclass(frozen=True)
class EntryScores:
    pattern: Mapping[str, NumberReading]  # pattern id -> reading
    coherence: NumberReading
    realism: NumberReading
    pattern_definitions: Mapping[str, str]  # pattern id -> sha256 of "name\ndefinition"

    def to_record(self) -> dict[str, Any]:
        return {
            "pattern": {k: v.to_record() for k, v in self.pattern.items()},
            "pattern_definition_sha256": dict(self.pattern_definitions),
            "coherence": self.coherence.to_record(),
            "realism": self.realism.to_record(),
        }

    @staticmethod
    def from_record(record: Mapping[str, Any], *, floor: float = DEFAULT_FLOOR) -> EntryScores:
        return EntryScores(
            pattern={
                k: NumberReading.from_record(v, floor=floor) for k, v in record["pattern"].items()
            },
            coherence=NumberReading.from_record(record["coherence"], floor=floor),
            realism=NumberReading.from_record(record["realism"], floor=floor),
            pattern_definitions=dict(record.get("pattern_definition_sha256") or {}),
        )


def pattern_prompt(template: Template, text: str, name: str, definition: str) -> JudgePrompt:
    return template.prompt(entry=text, pattern_name=name, pattern_definition=definition)


def entry_prompts(
    text: str, patterns: Sequence[PatternSpec], templates: EntryTemplates
) -> dict[str, JudgePrompt]:
    """Every prompt an entry is scored with, keyed "pattern:<id>", "coherence", "realism"."""
    if not text.strip():
        raise LabError("the entry is empty", where="entry scores")
    prompts = {
        f"pattern:{pid}": pattern_prompt(templates.pattern, text, name, definition)
        for pid, name, definition in patterns
    }
    prompts["coherence"] = templates.coherence.prompt(entry=text)
    prompts["realism"] = templates.realism.prompt(entry=text)
    return prompts


def score_entry(
    judge: Judge,
    text: str,
    *,
    patterns: Sequence[PatternSpec],
    floor: float = DEFAULT_FLOOR,
    templates: EntryTemplates | None = None,
) -> EntryScores:
    templates = templates or EntryTemplates.load()
    ids = [p[0] for p in patterns]
    if len(set(ids)) != len(ids):
        raise LabError(f"pattern ids repeat: {ids}", where="entry scores")
    prompts = entry_prompts(text, patterns, templates)
    readings = dict(
        zip(prompts, judge.read_numbers(list(prompts.values()), floor=floor), strict=True)
    )
    return EntryScores(
        pattern={
            pid: replace(readings[f"pattern:{pid}"], template=templates.pattern.ref) for pid in ids
        },
        coherence=replace(readings["coherence"], template=templates.coherence.ref),
        realism=replace(readings["realism"], template=templates.realism.ref),
        pattern_definitions={
            pid: text_sha256(f"{name}\n{definition}") for pid, name, definition in patterns
        },
    )
