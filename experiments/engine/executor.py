"""Where the batches of the store's cached-call door are computed: here, in this process (the
default), or on Ray actors that each hold their own copy of the run's local models and their own
client of each served judge (experiments/engine/ray_executor.py, opened by executor_choice.py
only when a run asks for it). A served judge's reading is the lab's own work (rendering,
encoding, the bounded walk, the HTTP round trips): on actors it runs in as many processes as
there are actors, so one Python process no longer caps how fast a fast judge server is read.

The executor is a run option, never part of a design: a preregistered design hashes the same
whatever hardware runs it, and the store it makes is the same too — the same requests, cut into
the same batches, sampled from the same per-row seeds; only where each batch is computed
differs. Whatever computes a batch, its results come back to the store's one writer, which
stores each batch all-or-nothing (experiments/engine/store/)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from pydantic import Field

from diarylab.foundation.datafiles import DataModel
from diarylab.model_access.shared_models import ModelRef

Compute = Callable[[list[int]], Sequence[Mapping[str, Any]]]


class ExecutorSettings(DataModel):
    """`diarylab run --executor ...`: where local model calls and served judges' readings run.
    Not a design field."""

    kind: Literal["inprocess", "ray"] = Field(
        "inprocess", description="inprocess: this process's models; ray: Ray actors"
    )
    address: str | None = Field(
        None,
        description='Ray cluster to join (e.g. "auto" or "ray://head:10001"); default: a '
        "local cluster started for the run (or the one this process already joined)",
    )
    actors: int | None = Field(
        None,
        ge=1,
        le=4096,
        description="model actors (default: one per GPU of the cluster, or 2 without GPUs)",
    )
    actor_gpus: float | None = Field(
        None,
        ge=0,
        le=64,
        description="GPUs each actor holds (default: 1 on a cluster with GPUs, else 0); more "
        "than 1 for a model sharded over several GPUs ([*].local.device_map)",
    )
    actor_cpus: float = Field(1.0, gt=0, le=256, description="CPUs each actor holds")
    max_resends: int = Field(
        3, ge=0, le=100, description="times a batch is sent again after its actor died"
    )


@dataclass(frozen=True)
class JudgeRef:
    """How an actor builds its own client of one of the run's served judges: the judge's spec
    as the design gave it (JSON, so the reference is hashable), read by the same judge builder.
    Each actor's client keeps the endpoint's concurrency: under Ray a served judge may have
    actors x concurrency requests in flight."""

    spec: str


Ref = ModelRef | JudgeRef


class Executor(Protocol):
    width: int  # batches one cached call may have in flight at once

    def batches(
        self, compute: Compute, batches: Sequence[list[int]], *, label: str, to_actors: bool
    ) -> Iterator[tuple[list[int], Sequence[Mapping[str, Any]]]]:
        """Each batch with its computed results, as each is ready (any order). `to_actors`: the
        call is a local model's or a judge's, which an actor can compute (a served chatbot's
        or writer's calls stay here)."""
        ...

    def status(self) -> str: ...

    def close(self) -> None: ...


class InProcess:
    """Every batch computed here, one after another, on the caller's own thread."""

    width = 1

    def batches(
        self, compute: Compute, batches: Sequence[list[int]], *, label: str, to_actors: bool
    ) -> Iterator[tuple[list[int], Sequence[Mapping[str, Any]]]]:
        for batch in batches:
            yield batch, compute(batch)

    def status(self) -> str:
        return ""

    def close(self) -> None:
        pass
