"""Reading a run's store in tests through the store's own typed reads (Store.select, count, dump,
calls_of): tests hold no SQL, as the lab holds none outside experiments/engine/store/."""

from __future__ import annotations

import contextlib
import json
import math
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from diarylab.experiments.engine.store import JudgmentRow, Store


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


# Served log-probabilities are the server's arithmetic: a request re-sent after a kill may be
# batched with others or read from the prefix cache, which moves float32 results in the last
# digits (measured: one stored log-probability 1.4e-5 apart, CPU build, 2026-12-01). Texts, keys
# and requests must be identical; numbers equal to the tier's tolerance.
NUMBERS_TOLERANCE = 1e-4


def close(a: Any, b: Any, path: str = "") -> list[str]:
    """Where two stored values differ: JSON texts are compared parsed, floats to the tolerance,
    everything else exactly."""
    if isinstance(a, str) and isinstance(b, str) and a[:1] in "[{" and b[:1] in "[{":
        with contextlib.suppress(ValueError):
            a, b = json.loads(a), json.loads(b)
    if isinstance(a, float) and isinstance(b, float | int):
        same = math.isclose(a, b, rel_tol=0, abs_tol=NUMBERS_TOLERANCE) or a == b
        return [] if same else [f"{path}: {a} != {b}"]
    if isinstance(a, dict) and isinstance(b, dict):
        if a.keys() != b.keys():
            return [f"{path}: keys {sorted(a)} != {sorted(b)}"]
        return [d for k in a for d in close(a[k], b[k], f"{path}.{k}")]
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        if len(a) != len(b):
            return [f"{path}: {len(a)} items != {len(b)}"]
        pairs = enumerate(zip(a, b, strict=True))
        return [d for i, (x, y) in pairs for d in close(x, y, f"{path}[{i}]")]
    return [] if a == b else [f"{path}: {a!r} != {b!r}"]


def judgment(target_kind, target, item, value, judge="tiny-judge", readable=True):
    """A judgment row of a tiny judge, readable or not, for tables built by hand."""
    return JudgmentRow(
        f"{judge}:{target}:{item}",
        target_kind,
        target,
        judge,
        item,
        value if readable else None,
        0.9 if readable else 0.1,
        readable,
        "t@1:abc",
        f"key-{target}-{item}",
    )
