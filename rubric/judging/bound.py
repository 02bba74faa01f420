"""Certified bounds for a 0–100 reading that did not learn everything (trie-v3): where the
probability went that the records do not place, and how far that could move E[n] and the
coverage. Computed from the node records alone, so a stored reading's bound can be recomputed
without the model.

What a reading can leave open (each an `Open`: a mass m under a node, and the numbers [low, high]
that mass could still become):
- a node never read (its parent's read gave its mass): every number whose text starts with the
  node's digits (node "8": 8 and 80..89; node "1": 1, 10..19 and 100);
- the unseen tail of a node read by its top-k (1 − Σ P(every token seen)): the same range — an
  unseen child leads into the node's subtree, an unseen ender or mark ends it at the node's own
  number;
- a bare mark at least POINT_FLOOR likely after a number, not followed: that number alone.
Any part of an open mass may also become no number at all (uncovered).

The true reading is then S/C with C = C0 + Σ x_i and S = S0 + Σ y_i, where C0, S0 are the
covered mass and Σ n·P(n) the records place, 0 ≤ x_i ≤ m_i and low_i·x_i ≤ y_i ≤ high_i·x_i.
For fixed x the ratio is largest with every y_i = high_i·x_i, and (S0 + Σ high_i x_i)/(C0 + Σ x_i)
is linear-fractional in x, so its maximum over the box is at a vertex: some set of opens taken
whole. The best set is {i : high_i > the maximum} (adding an open raises the ratio exactly when
its value is above the ratio), a prefix of the opens sorted by high descending; so the maximum is
the largest ratio over those prefixes (the empty one included when C0 > 0). The minimum is the
same with low, ascending. Coverage lies in [C0, C0 + Σ m_i]. The reading reports the mean of
what it placed (S0/C0), which lies inside the interval; max_error bounds its distance to either
end."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any, Literal

from diarylab.rubric.judging.expected import (
    ALL_NODE_TEXTS,
    NUMBERS,
    SPACE,
    NodeReading,
    distribution,
    number_of,
    path_masses,
    prob,
)

OpenKind = Literal["node", "tail", "point"]


@dataclass(frozen=True)
class Open:
    text: str  # the node the mass hangs under
    kind: OpenKind
    mass: float
    low: int
    high: int


@dataclass(frozen=True)
class Bound:
    """A certified interval for E[n] (None when nothing can be covered) and for the coverage."""

    mean: tuple[float, float] | None
    coverage: tuple[float, float]
    open_mass: float

    def error_of(self, mean: float | None) -> float:
        """How far the true mean can be from `mean` (a point inside the interval)."""
        if self.mean is None or mean is None:
            return 0.0 if self.open_mass == 0 else float("inf")
        return max(self.mean[1] - mean, mean - self.mean[0], 0.0)

    def to_record(self) -> dict[str, Any]:
        return {
            "mean": None if self.mean is None else list(self.mean),
            "coverage": list(self.coverage),
            "open_mass": self.open_mass,
        }

    @staticmethod
    def from_record(record: Mapping[str, Any] | None) -> Bound | None:
        if not record:
            return None
        mean = record.get("mean")
        lo, hi = record["coverage"]
        return Bound(
            mean=None if mean is None else (float(mean[0]), float(mean[1])),
            coverage=(float(lo), float(hi)),
            open_mass=float(record.get("open_mass", 0.0)),
        )


@cache
def number_range(text: str) -> tuple[int, int]:
    """The smallest and largest n in 0..100 whose text starts with this node's digits (a few
    dozen node texts in all: kept, since every reading's bound asks for them)."""
    digits = text[1:] if text.startswith(SPACE) else text
    inside = [n for n in NUMBERS if str(n).startswith(digits)]
    return min(inside), max(inside)


def open_items(
    nodes: Mapping[str, NodeReading], mass: Mapping[str, float] | None = None
) -> list[Open] | None:
    """Every mass the records leave open; None when some record cannot say how much it left
    (a node read incompletely before trie-v3 kept its unseen tail). `mass`: path_masses(nodes),
    where the caller has it already."""
    mass = path_masses(nodes) if mass is None else mass
    items = []
    for text, m in sorted(mass.items()):
        if text not in nodes and m > 0 and text in ALL_NODE_TEXTS:
            items.append(Open(text, "node", m, *number_range(text)))
    for text, node in sorted(nodes.items()):
        m = mass.get(text, 0.0)
        if m <= 0:
            continue
        if node.unseen_logprob is not None:
            items.append(Open(text, "tail", m * prob(node.unseen_logprob), *number_range(text)))
        elif not node.end_exact:
            return None
        n = number_of(text)
        if node.open_point_logprob is not None and n is not None:
            items.append(Open(text, "point", m * prob(node.open_point_logprob), n, n))
    return [i for i in items if i.mass > 0]


def _extreme(c0: float, s0: float, values: list[tuple[float, int]], up: bool) -> float | None:
    best = s0 / c0 if c0 > 0 else None
    c, s = c0, s0
    for m, v in sorted(values, key=lambda mv: -mv[1] if up else mv[1]):
        c, s = c + m, s + m * v
        ratio = s / c
        if best is None or (ratio > best if up else ratio < best):
            best = ratio
    return best


def bound_of(c0: float, s0: float, items: Sequence[Open]) -> Bound:
    lo = _extreme(c0, s0, [(i.mass, i.low) for i in items], up=False)
    hi = _extreme(c0, s0, [(i.mass, i.high) for i in items], up=True)
    open_mass = sum(i.mass for i in items)
    mean = None if lo is None or hi is None else (lo, hi)
    return Bound(mean, (c0, min(1.0, c0 + open_mass)), open_mass)


def reading_bound(nodes: Mapping[str, NodeReading]) -> Bound | None:
    items = open_items(nodes)
    if items is None:
        return None
    dist = distribution(nodes)
    c0 = sum(dist)
    s0 = sum(n * p for n, p in zip(NUMBERS, dist, strict=True))
    return bound_of(c0, s0, items)


def worth(item: Open, mean: float, scale: float) -> float:
    """How far this open alone could move a mean of `mean` over covered mass `scale` (an upper
    estimate: its whole mass at the farther end of its range)."""
    return item.mass * max(item.high - mean, mean - item.low, 0.0) / scale
