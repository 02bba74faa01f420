"""The Ray executor: the store's batches of local model calls and of judges' readings computed
on Ray actors, each actor holding its own copy of the run's local models (one actor per GPU, or
per group of GPUs a sharded model spans) and its own client of each served judge. Imported only
by `diarylab run --executor ray`.

What travels to an actor is the batch's own compute function (the closure the store's cached
door was handed: a write, a chatbot's replies, a judge's readings) pickled once per cached call
and put in Ray's object store. Every local model the closure holds is pickled as a reference —
the spec and load settings the run loaded it with (executor.ModelRef) — and the actor resolves
it to its own loaded copy; every served judge likewise, as its spec (executor.JudgeRef), which
the actor builds into its own judge (its tokenizer, caches and connections). So the actor runs
exactly the code an in-process run runs, on the same batches with the same per-row seeds, and
sends back the results; the store's one writer stores each batch all-or-nothing, as in-process.
An actor that dies mid-batch is restarted by Ray (max_restarts) and its batch is sent again, to
whichever actor is free first: nothing was stored for it, so nothing is stored twice."""

from __future__ import annotations

import contextlib
import hashlib
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import ray
from ray.exceptions import ActorUnavailableError, GetTimeoutError, RayActorError, RayTaskError

from diarylab.experiments.engine.executor import Compute, ExecutorSettings, InProcess, Ref
from diarylab.experiments.engine.ray_actor import ModelActor, dumps, torch_threads
from diarylab.foundation.errors import LabError

Done = tuple[list[int], Sequence[Mapping[str, Any]]]
RESTART_WAIT_S = 300.0  # how long a dead actor may take to come back (it reloads its models)


class _Pool:
    """Which actors are free: a batch goes to the first free one."""

    def __init__(self, size: int) -> None:
        self.free = list(range(size))
        self.changed = threading.Condition()

    def take(self, *, block: bool) -> int | None:
        with self.changed:
            if block:
                self.changed.wait_for(lambda: bool(self.free))
            return self.free.pop(0) if self.free else None

    def give(self, index: int) -> None:
        with self.changed:
            self.free.append(index)
            self.free.sort()
            self.changed.notify()


class RayExecutor:
    def __init__(self, settings: ExecutorSettings, refs: Callable[[], Mapping[int, Ref]]) -> None:
        self.settings = settings
        self.refs = refs
        self.owns_cluster = not ray.is_initialized()
        if self.owns_cluster:
            ray.init(address=settings.address, include_dashboard=False, log_to_driver=False)
        gpus = float(ray.cluster_resources().get("GPU", 0))
        per_actor = settings.actor_gpus if settings.actor_gpus is not None else (1.0 if gpus else 0)
        if settings.actors is not None:
            count = settings.actors
        elif gpus and per_actor:
            count = max(1, int(gpus // per_actor))
        else:
            count = 2
        token = hashlib.sha256(f"{id(self)}:{threading.get_ident()}".encode()).hexdigest()[:8]
        remote = ray.remote(ModelActor)
        # Any: Ray's handle types do not know ModelActor's methods are remote.
        self.actors: list[Any] = [
            remote.options(
                name=f"diarylab-actor-{i}-{token}",
                max_restarts=-1,  # a dead actor comes back (empty) and gets batches again
                max_task_retries=0,  # the executor resends a lost batch itself, counted
                num_cpus=settings.actor_cpus,
                num_gpus=per_actor,
            ).remote(i, torch_threads())
            for i in range(count)
        ]
        self.width = count
        self.pool = _Pool(count)
        self.doing = ["idle"] * count
        self.resent = 0  # batches sent again after their actor died
        self.here = 0  # batches for actors computed in this process (not shippable)
        self.counting = threading.Lock()  # batches() runs on several threads at once
        self.local = InProcess()
        self.closed = threading.Event()
        self.waiting: list[threading.Thread] = []  # threads waiting for restarted actors

    def batches(
        self, compute: Compute, batches: Sequence[list[int]], *, label: str, to_actors: bool
    ) -> Iterator[Done]:
        data = dumps(compute, self.refs()) if to_actors and batches else None
        if data is None:
            if to_actors:
                with self.counting:
                    self.here += len(batches)
            yield from self.local.batches(compute, batches, label=label, to_actors=to_actors)
            return
        key = hashlib.sha256(data).hexdigest()
        payload = ray.put(data)
        pending: deque[tuple[list[int], int]] = deque((b, 0) for b in batches)
        inflight: dict[Any, tuple[int, list[int], int]] = {}
        try:
            while pending or inflight:
                while pending:
                    actor = self.pool.take(block=not inflight)
                    if actor is None:
                        break
                    batch, tries = pending.popleft()
                    self.doing[actor] = f"{label} ×{len(batch)}"
                    handle = self.actors[actor]
                    inflight[handle.run.remote(key, [payload], batch)] = (actor, batch, tries)
                ready, _ = ray.wait(list(inflight), num_returns=1)
                actor, batch, tries = inflight.pop(ready[0])
                try:
                    results = ray.get(ready[0])
                except RayActorError as exc:
                    self._back_when_restarted(actor)
                    if tries >= self.settings.max_resends:
                        raise LabError(
                            f"a batch of {len(batch)} ({label}) was lost with its actor "
                            f"{tries + 1} times: {exc}",
                            where="--executor ray",
                            fix="see the Ray logs (/tmp/ray/session_latest/logs) for why the "
                            "actors die (out of memory?)",
                        ) from exc
                    with self.counting:
                        self.resent += 1
                    pending.appendleft((batch, tries + 1))
                    continue
                except RayTaskError as exc:
                    self.doing[actor] = "idle"
                    self.pool.give(actor)
                    cause = getattr(exc, "cause", None)
                    raise cause if isinstance(cause, BaseException) else exc from None
                self.doing[actor] = "idle"
                self.pool.give(actor)
                yield batch, results
        finally:
            # Stopped early (an error elsewhere): let the batches in flight end, then free
            # their actors; what they computed is not stored, as in-process.
            if inflight:
                ray.wait(list(inflight), num_returns=len(inflight))
                for actor, _, _ in inflight.values():
                    self.doing[actor] = "idle"
                    self.pool.give(actor)

    def _back_when_restarted(self, actor: int) -> None:
        """A dead actor gets no batch until Ray has restarted it (a batch sent to an actor
        still restarting is lost again): a thread pings it and then frees it."""
        self.doing[actor] = "restarting"

        def wait() -> None:
            deadline = time.monotonic() + RESTART_WAIT_S
            # Never past close(): a handle used after Ray shut down takes the process with it.
            while time.monotonic() < deadline and not self.closed.is_set():
                try:
                    ray.get(self.actors[actor].ping.remote(), timeout=5)
                    break
                except (ActorUnavailableError, GetTimeoutError):
                    self.closed.wait(0.2)  # still restarting
                except RayActorError:
                    break  # dead for good (killed without restart): its batches fail, counted
            # Back in the pool even if it never answered: its next batch fails and counts
            # toward max_resends, so the run ends with an error rather than waiting forever.
            self.doing[actor] = "idle"
            self.pool.give(actor)

        thread = threading.Thread(target=wait, name=f"restart-{actor}", daemon=True)
        self.waiting.append(thread)
        thread.start()

    def status(self) -> str:
        lines = " · ".join(f"a{i} {doing}" for i, doing in enumerate(self.doing))
        resent = f" · resent {self.resent}" if self.resent else ""
        return lines + resent + (f" · here {self.here}" if self.here else "")

    def close(self) -> None:
        self.closed.set()
        for thread in self.waiting:
            thread.join()
        for actor in self.actors:
            # An actor that cannot close its vLLM workers in time is killed all the same.
            with contextlib.suppress(Exception):
                ray.get(actor.close.remote(), timeout=60)
            ray.kill(actor, no_restart=True)
        if self.owns_cluster:
            ray.shutdown()
