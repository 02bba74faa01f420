"""The door steering writes through. Extraction and calibration never call a model's generate for
texts they keep: they hand their requests to a `Writes` callable the caller supplies (the lab's
is the store's cached-call door, experiments/engine/writes.py `StoreWrites`), so every text is
stored before it is used and a resumed run reads it back. steering/ sits below experiments/ and
cannot open the store itself; this is the shape the two agree on."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from diarylab.model_access.settings import GenerationSettings
from diarylab.steering.apply import Steer


@dataclass(frozen=True)
class WriteRequest:
    """One text to write: the chat the model reads, its sampling seed, its steering (None:
    unsteered)."""

    messages: list[dict[str, str]] = field(hash=False)
    seed: int
    steer: Steer | None = None


@dataclass(frozen=True)
class Written:
    """A written text as the store keeps it (steering.apply.write_steered's record)."""

    text: str
    token_ids: tuple[int, ...]
    new_tokens: int
    stopped_at_eos: bool

    @staticmethod
    def from_record(record: Mapping[str, Any]) -> Written:
        return Written(
            text=str(record["text"]),
            token_ids=tuple(int(t) for t in record["token_ids"]),
            new_tokens=int(record["new_tokens"]),
            stopped_at_eos=bool(record["stopped_at_eos"]),
        )


class Writes(Protocol):
    """Writes every request with `settings`, in order (stored ones are read back, not written)."""

    def __call__(
        self, requests: Sequence[WriteRequest], settings: GenerationSettings
    ) -> list[Written]: ...
