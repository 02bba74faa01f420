"""What every judge offers: an identity (what determines its answers; never transport settings)
and raw JSON records per prompt, from which readings are built. Caching is not the judge's
business: the experiment store's one cached-call door keys a call by the judge's identity and
the prompt, and stores the record before anything reads it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from diarylab.rubric.judging.expected import DEFAULT_FLOOR, check_floor
from diarylab.rubric.judging.number_reading import NumberReading
from diarylab.rubric.judging.yes_no import YesNoReading
from diarylab.rubric.prompts import JudgePrompt

Question = Literal["number", "yes_no"]


class Judge:
    """Base class: subclasses implement identity(), number_record() and yes_no_record()."""

    def identity(self) -> dict[str, Any]:
        raise NotImplementedError

    def number_record(self, prompt: JudgePrompt) -> dict[str, Any]:
        """One judge call: the raw per-node log-probabilities for a 0–100 answer."""
        raise NotImplementedError

    def yes_no_record(self, prompt: JudgePrompt) -> dict[str, Any]:
        raise NotImplementedError

    def server_about(self) -> dict[str, Any]:
        """What the judge's server says it serves, added to every record it makes (a served
        judge: its dtype, rubric/judging/served_identity.py); a local judge's records say it
        already."""
        return {}

    @property
    def batch_size(self) -> int:
        """How many prompts records() should be given at once to keep the judge busy."""
        return 1

    def records(self, question: Question, prompts: Sequence[JudgePrompt]) -> list[dict[str, Any]]:
        """Several calls; a judge that can share work or run them in parallel overrides this."""
        if question == "number":
            return [self.number_record(p) for p in prompts]
        return self.yes_no_records(prompts)

    def yes_no_records(self, prompts: Sequence[JudgePrompt]) -> list[dict[str, Any]]:
        return [self.yes_no_record(p) for p in prompts]

    def read_number(self, prompt: JudgePrompt, *, floor: float = DEFAULT_FLOOR) -> NumberReading:
        return NumberReading.from_record(self.number_record(prompt), floor=check_floor(floor))

    def read_yes_no(self, prompt: JudgePrompt, *, floor: float = DEFAULT_FLOOR) -> YesNoReading:
        return YesNoReading.from_record(self.yes_no_record(prompt), floor=check_floor(floor))

    def read_numbers(
        self, prompts: Sequence[JudgePrompt], *, floor: float = DEFAULT_FLOOR
    ) -> list[NumberReading]:
        floor = check_floor(floor)
        return [NumberReading.from_record(r, floor=floor) for r in self.records("number", prompts)]

    def read_yes_nos(
        self, prompts: Sequence[JudgePrompt], *, floor: float = DEFAULT_FLOOR
    ) -> list[YesNoReading]:
        floor = check_floor(floor)
        return [YesNoReading.from_record(r, floor=floor) for r in self.yes_no_records(prompts)]
