"""Exporting a run's tables to Parquet for pandas."""

from __future__ import annotations

from pathlib import Path

from diarylab.experiments.engine.store import Store


def export_tables(store: Store, folder: Path) -> list[Path]:
    """Every table of the store but its meta table (calls included)."""
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name in [t for t in store.tables() if t != "meta"]:
        path = folder / f"{name}.parquet"
        tmp = path.with_name(f".{path.name}.tmp")
        store.frame(name).to_parquet(tmp, index=False)
        tmp.replace(path)
        written.append(path)
    return written
