"""Grader validation (filled in below)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from experiments.kinds.benchmark.schema import BenchmarkDesignFile


def validation_files(spec: BenchmarkDesignFile) -> list[Path]:
    return []


def validation_items(design_path: Path, spec: BenchmarkDesignFile, replies: list[Any]) -> list[Any]:
    return []


def validation_section(store: Any, design: Any, graded: Any, resamples: int) -> str:
    return ""
