"""One writer record and one way a kind writes steered texts with it (diary entries, letters, a
pilot's repeats): through the store's cached-call door, with one cache-key shape — the messages,
the full effective decoding settings of a local generate (model_access.decoding), the seed, the
steer and the template hash."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any, Generic, TypeVar

from diarists.cards import RoleCard
from diarists.profiles import Profile
from experiments.engine.store import Store
from foundation.datafiles import HashedDataFile
from model_access.local import LocalModel
from model_access.settings import GenerationSettings, LocalSettings
from steering.apply import write_steered

Rows = Callable[[int, Mapping[str, Any], str], Sequence[Any]]


@dataclass(frozen=True)
class SteeredWrite:
    """One text to write: the chat the writer reads, its sampling seed, its profile id."""

    messages: list[dict[str, str]]
    seed: int
    profile: str


TemplateT = TypeVar("TemplateT", bound=HashedDataFile)


@dataclass(frozen=True)
class Writer(Generic[TemplateT]):
    """The writing side of a kind (the diary's diarists, the friends' letter writers): one model
    writing every card under every profile, with the design's own generation and local settings
    (batch_size is read in write_cached, where batches are made) and the kind's own template
    (an entry's or a letter's; its hash enters every write's cache key)."""

    model: LocalModel
    generation: GenerationSettings
    local: LocalSettings
    template: TemplateT
    cards: dict[str, RoleCard]
    profiles: dict[str, Profile]

    def identity(self) -> dict[str, Any]:
        info = asdict(self.model.info())
        info.pop("location", None)  # where the files sit doesn't change the text
        return {"kind": "local", **info}


def write_cached(
    store: Store,
    writer: Writer[Any],
    writes: Sequence[SteeredWrite],
    rows: Rows,
    *,
    done: Callable[[int], None] | None = None,
) -> None:
    """Each write's result is stored (with its rows) before it is used; stored ones are read."""
    requests = [
        {
            "messages": w.messages,
            "generation": writer.model.generation_key(writer.generation),
            "seed": w.seed,
            "steer": writer.profiles[w.profile].spec(),
            "template_sha256": writer.template.sha256,
        }
        for w in writes
    ]

    def generate(indices: list[int]) -> list[dict[str, Any]]:
        return write_steered(
            writer.model,
            [writes[i].messages for i in indices],
            writer.generation,
            seeds=[writes[i].seed for i in indices],
            steers=[writer.profiles[writes[i].profile].steer for i in indices],
        )

    store.cached_calls(
        "diarist",
        writer.model.spec,
        writer.identity(),
        requests,
        generate,
        rows=rows,
        batch_size=writer.local.batch_size,
        done=done,
    )
