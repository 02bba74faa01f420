"""One writer record, and one way the lab writes steered texts (diary entries, letters, a
pilot's repeats, and the contrast pairs and calibration samples of vector extraction): through
the store's cached-call door, with one cache-key shape — the messages, the full effective
decoding settings of a local generate (model_access.decoding), the seed, the steer, and the
kind's template hash where the messages were made from one. `write_cached` is a kind's door
(its rows stored with each call); `StoreWrites` is the same door as steering's `Writes`
callable (steering/ cannot import the store, so extraction and calibration are handed this)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any, Generic, TypeVar

from diarylab.diarists.cards import RoleCard
from diarylab.diarists.profiles import Profile
from diarylab.experiments.engine.store import Store
from diarylab.foundation.datafiles import HashedDataFile
from diarylab.model_access.local import LocalModel
from diarylab.model_access.settings import GenerationSettings, LocalSettings
from diarylab.steering.apply import Steer, write_steered
from diarylab.steering.write_door import WriteRequest, Written

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
        return local_identity(self.model)


def local_identity(model: LocalModel) -> dict[str, Any]:
    """A local model's part of a call key: what determines its texts, not where its files are."""
    info = asdict(model.info())
    info.pop("location", None)
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
    profiles = [writer.profiles[w.profile] for w in writes]
    _write(
        store,
        writer.model,
        writer.identity(),
        writer.generation,
        [w.messages for w in writes],
        [w.seed for w in writes],
        [(p.steer, p.spec()) for p in profiles],
        {"template_sha256": writer.template.sha256},
        rows=rows,
        batch_size=writer.local.batch_size,
        done=done,
    )


class StoreWrites:
    """steering's `Writes` door on a store: extraction's contrast pairs and calibration's samples
    are written by the local model, stored before use, and read back on resume."""

    def __init__(
        self,
        store: Store,
        model: LocalModel,
        *,
        batch_size: int,
        done: Callable[[int], None] | None = None,
    ) -> None:
        self.store, self.model, self.batch_size, self.done = store, model, batch_size, done

    def __call__(
        self, requests: Sequence[WriteRequest], settings: GenerationSettings
    ) -> list[Written]:
        results = _write(
            self.store,
            self.model,
            local_identity(self.model),
            settings,
            [r.messages for r in requests],
            [r.seed for r in requests],
            [(r.steer, r.steer.spec() if r.steer else None) for r in requests],
            {},
            batch_size=self.batch_size,
            done=self.done,
        )
        return [Written.from_record(r) for r in results]


def _write(
    store: Store,
    model: LocalModel,
    identity: Mapping[str, Any],
    settings: GenerationSettings,
    messages: Sequence[list[dict[str, str]]],
    seeds: Sequence[int],
    steers: Sequence[tuple[Steer | None, dict[str, Any] | None]],
    extra: Mapping[str, Any],
    *,
    batch_size: int,
    rows: Rows | None = None,
    done: Callable[[int], None] | None = None,
) -> list[dict[str, Any]]:
    """The one cached write: each request keyed by its messages, the effective decoding settings,
    its seed, its steer's spec and `extra` (what else the messages were made from)."""
    generation = model.generation_key(settings)
    requests = [
        {"messages": m, "generation": generation, "seed": seed, "steer": spec, **extra}
        for m, seed, (_, spec) in zip(messages, seeds, steers, strict=True)
    ]

    def generate(indices: list[int]) -> list[dict[str, Any]]:
        return write_steered(
            model,
            [messages[i] for i in indices],
            settings,
            seeds=[seeds[i] for i in indices],
            steers=[steers[i][0] for i in indices],
        )

    return store.cached_calls(
        "diarist",
        model.spec,
        identity,
        requests,
        generate,
        rows=rows,
        batch_size=batch_size,
        done=done,
    )
