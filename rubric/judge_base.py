"""What every judge offers the experiment engine: an identity (what determines its answers; no
transport settings), a request key per (prompt, question), readings built from raw JSON records,
and an optional record cache so a repeated call is answered from the store."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal, Protocol

from rubric.expected import DEFAULT_FLOOR, NumberReading, check_floor
from rubric.prompts import JudgePrompt, json_sha256
from rubric.yes_no import YesNoReading

Question = Literal["number", "yes_no"]


class RecordCache(Protocol):
    """Where judge call records are kept (the experiment store implements this)."""

    def get(self, key: str) -> Mapping[str, Any] | None: ...

    def put(self, key: str, record: Mapping[str, Any]) -> None: ...


class MemoryCache:
    """A dict-backed RecordCache, for tests and one-off commands."""

    def __init__(self) -> None:
        self.records: dict[str, Mapping[str, Any]] = {}
        self.hits = 0

    def get(self, key: str) -> Mapping[str, Any] | None:
        found = self.records.get(key)
        self.hits += found is not None
        return found

    def put(self, key: str, record: Mapping[str, Any]) -> None:
        self.records[key] = record


class Judge:
    """Base class: subclasses implement identity(), number_record() and yes_no_record()."""

    cache: RecordCache | None = None

    def identity(self) -> dict[str, Any]:
        raise NotImplementedError

    def number_record(self, prompt: JudgePrompt) -> dict[str, Any]:
        """One judge call: the raw per-node log-probabilities for a 0–100 answer."""
        raise NotImplementedError

    def yes_no_record(self, prompt: JudgePrompt) -> dict[str, Any]:
        raise NotImplementedError

    def request_key(self, prompt: JudgePrompt, question: Question) -> str:
        """Stable hash of everything that determines the call's record."""
        return json_sha256(
            {"judge": self.identity(), "question": question, "prompt": prompt.key_fields()}
        )

    def _record(self, prompt: JudgePrompt, question: Question) -> Mapping[str, Any]:
        key = self.request_key(prompt, question) if self.cache is not None else ""
        if self.cache is not None and (found := self.cache.get(key)) is not None:
            return found
        record = self.number_record(prompt) if question == "number" else self.yes_no_record(prompt)
        if self.cache is not None:
            self.cache.put(key, record)
        return record

    def read_number(self, prompt: JudgePrompt, *, floor: float = DEFAULT_FLOOR) -> NumberReading:
        return NumberReading.from_record(self._record(prompt, "number"), floor=check_floor(floor))

    def read_yes_no(self, prompt: JudgePrompt, *, floor: float = DEFAULT_FLOOR) -> YesNoReading:
        return YesNoReading.from_record(self._record(prompt, "yes_no"), floor=check_floor(floor))

    def read_numbers(
        self, prompts: Sequence[JudgePrompt], *, floor: float = DEFAULT_FLOOR
    ) -> list[NumberReading]:
        return [self.read_number(p, floor=floor) for p in prompts]

    def yes_no_records(self, prompts: Sequence[JudgePrompt]) -> list[dict[str, Any]]:
        """Several yes/no calls; a judge that can share work between them overrides this."""
        return [self.yes_no_record(p) for p in prompts]

    def read_yes_nos(
        self, prompts: Sequence[JudgePrompt], *, floor: float = DEFAULT_FLOOR
    ) -> list[YesNoReading]:
        floor = check_floor(floor)
        keys = [self.request_key(p, "yes_no") for p in prompts] if self.cache is not None else []
        found: list[Mapping[str, Any] | None] = (
            [self.cache.get(k) for k in keys] if self.cache is not None else [None] * len(prompts)
        )
        missing = [i for i, f in enumerate(found) if f is None]
        for i, record in zip(
            missing, self.yes_no_records([prompts[i] for i in missing]), strict=True
        ):
            found[i] = record
            if self.cache is not None:
                self.cache.put(keys[i], record)
        return [YesNoReading.from_record(r, floor=floor) for r in found if r is not None]
