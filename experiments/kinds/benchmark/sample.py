"""The fixed sample of conversations a benchmark design runs: `size` conversations split over
the strata (acuity) in proportion to the file by largest-remainder allocation, and inside each
stratum the conversations whose seeded hash ranks lowest. The same file and seed give the same
ids whatever order the rows come in; a larger size keeps every id of a smaller one's stratum
picks where the allocation allows."""

from __future__ import annotations

import hashlib
import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from diarylab.experiments.kinds.benchmark.data import Benchmark, Conversation


@dataclass(frozen=True)
class Sample:
    ids: tuple[str, ...]  # in file order
    allocation: dict[str, int]  # stratum -> conversations drawn
    population: dict[str, int]  # stratum -> conversations in the file

    def manifest(self, data_sha256: str, seed: int) -> dict[str, object]:
        return {
            "data_sha256": data_sha256,
            "seed": seed,
            "size": len(self.ids),
            "allocation": self.allocation,
            "population": self.population,
            "ids": list(self.ids),
        }


def largest_remainder(counts: Mapping[str, int], size: int) -> dict[str, int]:
    """`size` seats over the strata in proportion to `counts`: each its whole quota, then one
    more to the largest fractional remainders (ties by stratum name), never above its count."""
    total = sum(counts.values())
    if size >= total:
        return dict(counts)
    quotas = {k: size * n / total for k, n in counts.items()}
    seats = {k: math.floor(q) for k, q in quotas.items()}
    left = size - sum(seats.values())
    order = sorted(counts, key=lambda k: (-(quotas[k] - seats[k]), k))
    for k in order[:left]:
        seats[k] += 1
    return seats


def _rank(seed: int, ident: str) -> str:
    return hashlib.sha256(f"{seed}:{ident}".encode()).hexdigest()


def draw(benchmark: Benchmark, size: int, seed: int) -> Sample:
    strata: dict[str, list[Conversation]] = defaultdict(list)
    for c in benchmark.conversations:
        strata[c.stratum].append(c)
    population = {k: len(v) for k, v in sorted(strata.items())}
    allocation = largest_remainder(population, size)
    chosen: set[str] = set()
    for stratum, members in strata.items():
        ranked = sorted(members, key=lambda c: _rank(seed, c.id))
        chosen |= {c.id for c in ranked[: allocation[stratum]]}
    ids = tuple(c.id for c in benchmark.conversations if c.id in chosen)
    return Sample(ids, allocation, population)


def sampled(benchmark: Benchmark, sample: Sample) -> Sequence[Conversation]:
    by_id = benchmark.by_id()
    return [by_id[i] for i in sample.ids]
