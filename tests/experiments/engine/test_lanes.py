"""Lanes (experiments/engine/lanes.py): model calls of several lanes in flight at once, while
the store keeps one writer thread, stores each batch all-or-nothing and keeps what the first
lane to store a shared call stored."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import ClassVar

import pytest

from diarylab.experiments.engine.lanes import lane_key, lanes_of, run_lanes
from diarylab.experiments.engine.store import Store


@dataclass(frozen=True)
class Item:
    TABLE: ClassVar[str] = "items"
    item_id: str
    value: str


def lane_calls(store: Store, lane: str, n: int, *, wait: float, log: list | None = None):
    """A job of n calls, two per batch, each batch `wait` seconds of (GIL-free) model time."""

    def compute(indices: list[int]) -> list[dict]:
        if log is not None:
            log.append(("compute", lane, threading.get_ident()))
        time.sleep(wait)
        return [{"text": f"{lane}-{i}"} for i in indices]

    def job() -> None:
        store.cached_calls(
            "test",
            lane,
            {"lane": lane},
            [{"i": i} for i in range(n)],
            compute,
            rows=lambda i, result, key: (Item(f"{lane}:{i}", result["text"]),),
            batch_size=2,
        )

    return job


@pytest.fixture()
def store(tmp_path):
    s = Store(tmp_path / "store.sqlite", (Item,))
    yield s
    s.close()


def test_lanes_overlap_and_every_store_write_is_on_the_writer_thread(store, monkeypatch):
    writer = threading.get_ident()
    on = []
    transaction = store.transaction

    def watched():
        on.append(threading.get_ident())
        return transaction()

    monkeypatch.setattr(store, "transaction", watched)
    log: list = []
    jobs = [lane_calls(store, name, 6, wait=0.1, log=log) for name in ("a", "b")]
    start = time.perf_counter()
    run_lanes(store, [[jobs[0]], [jobs[1]]])
    wall = time.perf_counter() - start
    # Each lane is 3 batches of 0.1 s: one after another would be 0.6 s.
    assert wall < 0.5, wall
    assert {t for kind, _, t in log} - {writer}, "model calls ran on the lanes' threads"
    assert on and set(on) == {writer}
    assert store.count("items") == 12 and store.count("calls") == 12


def test_local_jobs_and_served_jobs_of_one_identity_share_a_lane_in_order():
    calls = []
    a, b = {"model": "a"}, {"model": "b"}
    keys = [
        lane_key(True, {}),
        lane_key(False, a),
        lane_key(True, {"x": 1}),
        lane_key(False, b),
        lane_key(False, dict(a)),  # another judge of a's identity: a's calls, a's lane
        None,
    ]
    lanes = lanes_of([(key, lambda n=n: calls.append(n)) for n, key in enumerate(keys)])
    assert [len(lane) for lane in lanes] == [2, 2, 1, 1]
    for lane in lanes:
        for job in lane:
            job()
    assert calls == [0, 2, 1, 4, 3, 5]


def test_a_failing_lane_stops_the_others_after_their_batch_and_is_raised(store):
    def broken() -> None:
        time.sleep(0.05)
        raise RuntimeError("server gone")

    slow = lane_calls(store, "a", 4, wait=0.1)
    later = []
    with pytest.raises(RuntimeError, match="server gone"):
        run_lanes(store, [[slow, lambda: later.append(1)], [broken]])
    assert not later, "a lane started a new job after another failed"
    assert store.count("items") == 4  # the job in flight finished its batches whole
    assert store.count("calls") == store.count("items")


def test_the_same_call_in_two_lanes_keeps_the_first_stored_result_for_both(store):
    """Two lanes asking one call (the same identity and request) at once: each computes, the
    first to store wins, and the second lane's rows use the stored result, not its own."""
    order = iter([0.0, 0.15])
    both_asked = threading.Barrier(2, timeout=10)  # neither stored before the other looked
    made = []

    def job(row: str):
        wait = next(order)

        def compute(indices: list[int]) -> list[dict]:
            both_asked.wait()
            time.sleep(wait)
            made.append(row)
            return [{"text": f"by {row}"}]

        def run() -> None:
            [result] = store.cached_calls(
                "test",
                "m",
                {"same": True},
                [{"q": 1}],
                compute,
                rows=lambda i, r, key: (Item(row, r["text"]),),
            )
            assert result == {"text": "by first"}

        return run

    run_lanes(store, [[job("first")], [job("second")]])
    assert made == ["first", "second"]
    assert store.dump("items") == [("first", "by first"), ("second", "by first")]
    assert store.count("calls") == 1


def test_lanes_inside_a_lane_run_in_place(store):
    seen = []

    def inner() -> None:
        run_lanes(store, [[lambda: seen.append(threading.get_ident())]] * 2)

    run_lanes(store, [[inner], [lambda: None]])
    assert len(seen) == 2 and len(set(seen)) == 1
