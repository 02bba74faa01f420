"""The benchmark design's inputs, read where both the kind and its report need them: the
user's data file and its seeded sample, and the grader template (for a design read back from
its run folder, the paths the run recorded)."""

from __future__ import annotations

import dataclasses
from functools import lru_cache
from pathlib import Path
from typing import cast

from diarylab.experiments.engine.contract import Design
from diarylab.experiments.engine.inputs import copy_by_sha256
from diarylab.experiments.engine.runfolder import DESIGN_FILE, read_manifest
from diarylab.experiments.kinds.benchmark.data import (
    Benchmark,
    Conversation,
    Format,
    load_benchmark,
)
from diarylab.experiments.kinds.benchmark.grader import Grader, load_grader
from diarylab.experiments.kinds.benchmark.sample import Sample, draw, sampled
from diarylab.experiments.kinds.benchmark.schema import BenchmarkDesignFile
from diarylab.foundation.errors import LabError


def benchmark_spec(design: Design) -> BenchmarkDesignFile:
    return cast(BenchmarkDesignFile, design.spec)


@lru_cache(maxsize=4)
def _load(path: Path, fmt: Format, mtime_ns: int, size: int) -> Benchmark:
    return load_benchmark(path, fmt)


def _recorded(design: Design, section: str) -> Path | None:
    """The path a run recorded, for a design read back from its run folder (its relative
    paths were relative to the original design file, not to the folder's copy)."""
    folder = design.path.parent
    if design.path.name != DESIGN_FILE or not (folder / "manifest.json").is_file():
        return None
    table = read_manifest(folder).get(section, {})
    sha = table.get("sha256") or table.get("sample", {}).get("data_sha256")
    copy = copy_by_sha256(folder, sha) if isinstance(sha, str) else None
    if copy is not None:  # the folder's own copy: the recorded path may be gone or elsewhere
        return copy
    recorded = table.get("path")
    return Path(recorded) if recorded else None


def data_path(design: Design) -> Path:
    recorded = _recorded(design, "benchmark")
    return recorded or benchmark_spec(design).benchmark.data_path(design.path).resolve()


def benchmark_of(design: Design) -> tuple[Benchmark, Sample]:
    table = benchmark_spec(design).benchmark
    path = data_path(design)
    stat = path.stat() if path.is_file() else None
    if stat is None:
        raise LabError(
            f"benchmark file not found ({path})",
            where=f"{design.path} benchmark.data",
            fix="point benchmark.data at your own copy of the JSONL file (it is not shipped; "
            "relative paths start at the design file's folder)",
        )
    bench = _load(path, table.format, stat.st_mtime_ns, stat.st_size)
    rows = len(bench.conversations)
    if table.sample > rows:  # a sample of the whole file would silently be smaller than asked
        raise LabError(
            f"sample = {table.sample} asks for more conversations than the file holds ({rows})",
            where=f"{design.path} benchmark.sample",
            fix=f"set sample = {rows} or fewer, or point benchmark.data at the full file",
        )
    return bench, draw(bench, table.sample, design.seed)


def grader_of(design: Design) -> Grader:
    recorded = _recorded(design, "grader_template")
    spec = benchmark_spec(design).benchmark
    grader = load_grader(recorded or spec.template_path(design.path))
    return dataclasses.replace(grader, default_system=spec.grader.system_message())


def conversations_of(design: Design) -> list[Conversation]:
    bench, sample = benchmark_of(design)
    return list(sampled(bench, sample))
