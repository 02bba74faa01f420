"""A 0–100 reading as the lab keeps it: the distribution, coverage, mean and mode computed from
a judge's per-node records by the expected-number algorithm (rubric/judging/expected.py), with the
certified bound a partial reading carries (rubric/judging/bound.py). Kept apart from the algorithm's
definitions so that the bound, which builds on those definitions, is not imported by them."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from diarylab.foundation.errors import LabError
from diarylab.rubric.judging.bound import Bound, reading_bound
from diarylab.rubric.judging.expected import (
    ALGORITHM,
    DEFAULT_FLOOR,
    NUMBERS,
    NodeReading,
    ReadingSummary,
    distribution,
)
from diarylab.rubric.prompts import TemplateRef


@dataclass(frozen=True)
class NumberReading:
    distribution: tuple[float, ...]  # 101 probabilities, index = number
    coverage: float
    mean: float | None  # None when unreadable
    mode: int | None
    readable: bool
    floor: float
    record: Mapping[str, Any]  # the raw judge call (per-node log-probabilities), JSON-ready
    template: TemplateRef | None = None

    @property
    def exact(self) -> bool:
        return bool(self.record.get("exact", True))

    @property
    def bound(self) -> Bound | None:
        """The certified interval for E[n] and the coverage (trie-v3; None for older records
        that cannot give one)."""
        return Bound.from_record(self.record.get("bound"))

    def to_record(self) -> dict[str, Any]:
        """The raw call record plus the template it came from: enough to recompute the reading."""
        return TemplateRef.attach(self.record, self.template)

    @staticmethod
    def from_record(record: Mapping[str, Any], *, floor: float = DEFAULT_FLOOR) -> NumberReading:
        nodes = _nodes_of(record)
        raw, template = TemplateRef.split(record)
        reading = number_reading(nodes, floor=floor, record=raw)
        return reading if template is None else replace(reading, template=template)


def number_summary(record: Mapping[str, Any], *, floor: float = DEFAULT_FLOOR) -> ReadingSummary:
    """The mean, coverage and readability NumberReading.from_record gives, computed the same
    way but without rebuilding the bound and the node records (already in the stored record):
    a judgment row needs only these (40 µs a reading against from_record's 191, 2026-12-05)."""
    by_prefix = {n.prefix: n for n in _nodes_of(record)}
    return _summary(distribution(by_prefix), floor)


def _nodes_of(record: Mapping[str, Any]) -> list[NodeReading]:
    if record.get("kind") != "number":
        raise LabError(f"not a number record (kind={record.get('kind')!r})", where="record")
    return [NodeReading.from_record(r) for r in record.get("nodes", [])]


def _summary(dist: list[float], floor: float) -> ReadingSummary:
    coverage = sum(dist)
    readable = coverage >= floor and coverage > 0
    mean = sum(n * p for n, p in zip(NUMBERS, dist, strict=True)) / coverage if readable else None
    return ReadingSummary(mean, coverage, readable)


def number_reading(
    nodes: Iterable[NodeReading],
    *,
    floor: float = DEFAULT_FLOOR,
    record: Mapping[str, Any] | None = None,
) -> NumberReading:
    by_prefix = {n.prefix: n for n in nodes}
    dist = distribution(by_prefix)
    summary = _summary(dist, floor)
    coverage, mean, readable = summary.coverage, summary.value, summary.readable
    mode = max(NUMBERS, key=lambda n: dist[n]) if readable else None
    base = dict(record or {})
    base.setdefault("kind", "number")
    base.setdefault("algorithm", ALGORITHM)
    base["nodes"] = [by_prefix[p].to_record() for p in sorted(by_prefix, key=lambda s: (len(s), s))]
    base.setdefault("exact", all(n.end_exact for n in by_prefix.values()))
    if base["algorithm"] == ALGORITHM:
        bound = reading_bound(by_prefix)
        base["bound"] = None if bound is None else bound.to_record()
    return NumberReading(
        distribution=tuple(dist),
        coverage=coverage,
        mean=mean,
        mode=mode,
        readable=readable,
        floor=floor,
        record=base,
    )
