"""Several servers of one model (vLLM replicas) behind one endpoint: each call starts at the next
replica in turn, and a try that failed is made again on the next one, so a replica that is down
costs a retry, not the run. Tries, failures and retries elsewhere are counted per replica."""

from __future__ import annotations

import threading
from collections import Counter
from typing import Any


class Replicas:
    def __init__(self, urls: tuple[str, ...]) -> None:
        self.urls = urls
        self._turn = 0
        self._lock = threading.Lock()
        self.tries: Counter[str] = Counter()
        self.failures: Counter[str] = Counter()
        self.failovers = 0  # tries made again on another replica after a failure

    def start(self) -> int:
        with self._lock:
            turn = self._turn
            self._turn += 1
        return turn

    def url(self, start: int, attempt: int) -> str | None:
        if not self.urls:
            return None
        url = self.urls[(start + attempt) % len(self.urls)]
        with self._lock:
            self.tries[url] += 1
        return url

    def failed(self, url: str | None) -> None:
        if url is not None:
            with self._lock:
                self.failures[url] += 1

    def retried(self, url: str | None) -> None:
        if url is not None and len(self.urls) > 1:
            with self._lock:
                self.failovers += 1

    def stats(self) -> dict[str, Any]:
        with self._lock:
            return {
                "tries": dict(self.tries),
                "failures": dict(self.failures),
                "failovers": self.failovers,
            }
