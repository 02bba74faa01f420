"""Reading a run's store in tests through the store's own typed reads (Store.select, count, dump,
calls_of): tests hold no SQL, as the lab holds none outside experiments/engine/store/."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from diarylab.experiments.engine.store import Store


@contextmanager
def opened(path: Path) -> Iterator[Store]:
    """A run folder's store (or a store file), closed after use."""
    path = Path(path)
    store = Store(path / "store.sqlite" if path.is_dir() else path)
    try:
        yield store
    finally:
        store.close()


def call(store: Store, key: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The request and result of one stored call."""
    [(request, result)] = store.select("calls", ["request", "result"], where={"key": key})
    return json.loads(request), json.loads(result)


def requests(store: Store, kind: str) -> list[dict[str, Any]]:
    """The requests of every stored call of a kind, in key order."""
    return [json.loads(r[3]) for r in store.calls_of([kind])]


def results(store: Store, kind: str) -> list[dict[str, Any]]:
    return [json.loads(r[4]) for r in store.calls_of([kind])]


def snapshot(path: Path, tables: Sequence[str]) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of `tables`, sorted, and every call (key, kind, model, request, result) in key
    order: what two runs that must end alike are compared by."""
    with opened(path) as store:
        out = {t: store.dump(t) for t in tables}
        out["calls"] = store.calls_of()
    return out
