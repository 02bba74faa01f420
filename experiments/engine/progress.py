"""A progress bar for long work: units done / total, and model calls made vs. read from cache."""

from __future__ import annotations

from types import TracebackType

from tqdm import tqdm

from diarylab.experiments.engine.store import Store


class Progress:
    def __init__(self, total: int, store: Store, *, enabled: bool = True) -> None:
        self.store = store
        self.bar = tqdm(total=total, unit="step", disable=not enabled, dynamic_ncols=True)

    def tick(self, n: int = 1) -> None:
        self.bar.update(n)
        actors = self.store.executor.status()  # what each Ray actor is doing ("" in-process)
        extra = {"actors": actors} if actors else {}
        self.bar.set_postfix(made=self.store.made, cached=self.store.cached, **extra, refresh=False)

    def __enter__(self) -> Progress:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.bar.close()
