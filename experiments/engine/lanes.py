"""Model calls in flight at once: the judges of a judging phase, the chatbots of one turn.

Work is split into lanes; each lane's jobs run one after another on a thread of its own, and
the lanes run side by side. A served model gets a lane of its own (its endpoint's concurrency
is the client's business, model_access/served.py) unless another has its identity
(`lane_key`); every in-process model shares one lane, since they share one CPU or GPU (and
often one loaded copy, model_access/shared_models.py).

The store keeps one writer: the thread that runs the lanes serves every read and write the
lanes ask of the store (Store.on_writer), so each batch is stored all-or-nothing, as before,
and a lane's call is stored before the lane uses it. Only the order lanes' batches commit in
depends on timing; what is stored does not (Store.frame reads in key order)."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from diarylab.experiments.engine.store import Store

if TYPE_CHECKING:
    from diarylab.rubric.judging.judge_base import Judge
    from diarylab.rubric.judging.judges import LocalJudgeSpec, ServedJudgeSpec

Job = Callable[[], None]
LOCAL = "local"


def lanes_of(jobs: Sequence[tuple[str | None, Job]]) -> list[list[Job]]:
    """(lane key, job) pairs, in order, as lanes: jobs with the same key share one lane (where
    the first of them stood), in order; a job keyed None has a lane of its own."""
    lanes: list[list[Job]] = []
    shared: dict[str, list[Job]] = {}
    for key, job in jobs:
        if key is None:
            lanes.append([job])
        elif key in shared:
            shared[key].append(job)
        else:
            shared[key] = [job]
            lanes.append(shared[key])
    return lanes


def lane_key(local: bool, identity: Mapping[str, Any]) -> str:
    """Where a model's calls go: every in-process model in one lane; a served one in the lane
    of its identity. Two served models of one identity make the same calls (the same cache
    keys, whatever their endpoints), so they share a lane: the first computes, the next reads
    it back, as one after another always did — never a race over which result is kept."""
    return LOCAL if local else "served:" + json.dumps(identity, sort_keys=True, default=str)


def judge_lane(spec: LocalJudgeSpec | ServedJudgeSpec, judge: Callable[[str], Judge]) -> str:
    """A judge's lane, as its spec says (a served judge is built for its identity: cheap, no
    weights)."""
    return lane_key(*spec.lane(lambda: judge(spec.id).identity()))


def run_lanes(store: Store, lanes: Sequence[Sequence[Job]]) -> None:
    """Run every lane to its end, side by side; the first lane (in lane order) to fail has its
    error raised once every lane has stopped. A lane that sees another fail starts no new job
    (the job in flight finishes its batch: nothing is half-stored)."""
    lanes = [lane for lane in lanes if lane]
    if len(lanes) <= 1 or not store.is_writer():
        # One lane, or lanes asked for from inside a lane: nothing to overlap with here.
        for lane in lanes:
            for job in lane:
                job()
        return
    stop = threading.Event()
    errors: list[BaseException | None] = [None] * len(lanes)
    with store.serving() as inbox:

        def work(index: int, lane: Sequence[Job]) -> None:
            try:
                for job in lane:
                    if stop.is_set():
                        return
                    job()
            except BaseException as exc:  # handed to the writer thread, raised there
                errors[index] = exc
                stop.set()
            finally:
                inbox.put(None)

        threads = [
            threading.Thread(target=work, args=(i, lane), name=f"lane-{i}", daemon=True)
            for i, lane in enumerate(lanes)
        ]
        for thread in threads:
            thread.start()
        running = len(threads)
        try:
            while running:
                errand = inbox.get()
                if errand is None:
                    running -= 1
                    continue
                do, answer = errand
                try:
                    answer.set_result(do())
                except BaseException as exc:
                    answer.set_exception(exc)
        except BaseException:
            stop.set()  # the writer itself was stopped (Ctrl-C): lanes start nothing new
            raise
        for thread in threads:
            thread.join()
    first = next((e for e in errors if e is not None), None)
    if first is not None:
        raise first


def run_spread(store: Store, jobs: Sequence[Job], width: int) -> None:
    """`jobs` over `width` threads at once (round robin), each job a cached call whose batches
    go to the executor's actors: the judge groups of one local judge under the Ray executor,
    each group one batch, so `width` actors are kept busy. From the writer thread this is
    run_lanes; from inside a lane the new threads' store work goes to the writer that is
    already serving the lanes. Errors as in run_lanes: the first is raised once all stopped."""
    lanes = [list(jobs[i::width]) for i in range(max(1, width))]
    if store.is_writer() or not store.is_serving():
        run_lanes(store, lanes)
        return
    stop = threading.Event()
    errors: list[BaseException | None] = [None] * len(lanes)

    def work(index: int, lane: Sequence[Job]) -> None:
        try:
            for job in lane:
                if stop.is_set():
                    return
                job()
        except BaseException as exc:  # raised on the calling lane's thread, below
            errors[index] = exc
            stop.set()

    threads = [
        threading.Thread(target=work, args=(i, lane), name=f"spread-{i}", daemon=True)
        for i, lane in enumerate(lanes)
        if lane
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    first = next((e for e in errors if e is not None), None)
    if first is not None:
        raise first
