"""The store's one writer: the thread that opened it. While lanes run (experiments/engine/
lanes.py), every read and write another thread asks of the store is handed to that thread and
done there, between other lanes' errands, so SQLite sees one connection used by one thread and
every batch stays one transaction."""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from contextlib import contextmanager
from typing import Any, TypeVar

T = TypeVar("T")
# What a worker hands the writer: the work and where its answer goes.
Errand = tuple[Callable[[], Any], "Future[Any]"]


class OneWriter:
    def __init__(self) -> None:
        self._writer = threading.get_ident()
        self._inbox: queue.Queue[Errand | None] | None = None

    def on_writer(self, work: Callable[[], T]) -> T:
        """`work()` done on the store's writer thread: at once there, or — while lanes run
        (`serving`) — handed to the writer, which does it between other lanes' errands."""
        inbox = self._inbox
        if inbox is None or threading.get_ident() == self._writer:
            return work()
        answer: Future[T] = Future()
        inbox.put((work, answer))
        return answer.result()

    def is_writer(self) -> bool:
        return threading.get_ident() == self._writer

    def is_serving(self) -> bool:
        """Lanes are running: another thread's store work is handed to the writer."""
        return self._inbox is not None

    @contextmanager
    def serving(self) -> Iterator[queue.Queue[Errand | None]]:
        """While open, other threads' store work queues here; the writer loop (lanes.py) does
        it. On leaving, errands still queued are refused, so no worker waits forever."""
        if not self.is_writer() or self._inbox is not None:
            raise RuntimeError("only the store's writer serves lanes, one set at a time")
        inbox: queue.Queue[Errand | None] = queue.Queue()
        self._inbox = inbox
        try:
            yield inbox
        finally:
            self._inbox = None
            while not inbox.empty():
                item = inbox.get_nowait()
                if item is not None:
                    item[1].set_exception(RuntimeError("the run stopped"))
