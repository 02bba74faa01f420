"""A bounded 0–100 reading (trie-v3): read the trie from the root, a round at a time, only where
what is still open could move E[n] by more than the judge's `max_error` (points), and stop when
the certified interval (rubric/judging/bound.py) puts the reported mean within max_error of either
end.
The same walk serves a local judge (every query answered with a full next-token vector) and a
served one (answers by id, or a node's top-k first where its ids do not fit one request).

Each round asks, from the opens in order of how far each alone could move the mean, the fewest
whose reading would leave the rest below max_error; a node is read, a tail is completed, a mark
is followed. A query is never asked twice, so the walk ends (at the latest when every node is
read, which is the exact reading). Everything is a function of the answers alone, so a reading
is deterministic and a resumed run stores the same records."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Literal

from diarylab.rubric.judging.bound import Bound, Open, bound_of, open_items, worth
from diarylab.rubric.judging.expected import (
    NUMBERS,
    POINT_FLOOR,
    NodeReading,
    distribution,
    path_masses,
    prob,
)
from diarylab.rubric.judging.number_trie import NumberTrie, digits_after, read_node
from diarylab.rubric.judging.vocab import VocabFacts

QueryKind = Literal["node", "tail", "point"]


@dataclass(frozen=True)
class Query:
    kind: QueryKind  # read a node / complete a node read by its top-k / follow a mark
    index: int  # the trie node
    mark: int | None = None  # the mark's token id, for "point"


@dataclass
class Walk:
    trie: NumberTrie
    facts: VocabFacts
    max_error: float
    node_cutoff: float = 0.0  # nodes reached with less probability are never read
    lookups: dict[int, dict[int, float]] = field(default_factory=dict)
    after: dict[int, dict[int, float]] = field(default_factory=dict)
    asked: set[Query] = field(default_factory=set)
    rounds: int = 0

    def __post_init__(self) -> None:
        self.index_of = {node.text: i for i, node in enumerate(self.trie.nodes)}
        # Each node's reading, kept until an answer changes what it was read from: a round
        # answers a few nodes, and every round's bound reads them all.
        self._read: dict[int, NodeReading] = {}

    # ------------------------------------------------------------------ answers
    def answer_node(self, index: int, lookup: Mapping[int, float]) -> None:
        """What a query at node `index` showed (merged with what was known)."""
        self.lookups.setdefault(index, {}).update(lookup)
        self._read.pop(index, None)

    def answer_point(self, index: int, mark: int, lookup: Mapping[int, float]) -> None:
        """What followed node `index` + mark; a mark whose digits did not all come back stays
        open (never guessed)."""
        if all(i in lookup for i in self.facts.continuation_ids):
            self.after.setdefault(index, {})[mark] = digits_after(lookup, self.facts)
            self._read.pop(index, None)

    # ------------------------------------------------------------------ state
    def nodes(self) -> dict[str, NodeReading]:
        out = {}
        for i in sorted(self.lookups):
            node = self.trie.nodes[i]
            reading = self._read.get(i)
            if reading is None:
                lookup, after = self.lookups[i], self.after.get(i)
                reading = self._read[i] = read_node(node, lookup, self.facts, after_point=after)
            out[node.text] = reading
        return out

    def bound(self) -> tuple[Bound, float | None, list[Open]]:
        nodes = self.nodes()
        mass = path_masses(nodes)  # once for both
        items = open_items(nodes, mass) or []
        dist = distribution(nodes, mass)
        c0 = sum(dist)
        s0 = sum(n * p for n, p in zip(NUMBERS, dist, strict=True))
        return bound_of(c0, s0, items), (s0 / c0 if c0 > 0 else None), items

    # ------------------------------------------------------------------ planning
    def next_queries(self) -> list[Query]:
        """The next round; [] when the bound is within max_error or nothing is left to ask."""
        if not self.lookups:
            return self._new([Query("node", 0)])
        bound, mean, items = self.bound()
        if bound.error_of(mean) <= self.max_error:
            return []
        # Where the mean is heading: the open masses at their middles, over the most they could
        # cover (a planning estimate only; stopping is decided by the certified bound).
        placed = sum(i.mass * (i.low + i.high) / 2 for i in items)
        covered = bound.coverage[0] + sum(i.mass for i in items)
        heading = ((mean or 0.0) * bound.coverage[0] + placed) / covered if covered > 0 else 50.0
        scale = bound.coverage[1] or 1.0
        ranked = sorted(
            ((worth(item, heading, scale), k, item) for k, item in enumerate(items)),
            key=lambda t: (-t[0], t[1]),
        )
        left = sum(w for w, _, _ in ranked)
        chosen: list[Query] = []
        for w, _, item in ranked:
            if left <= self.max_error and chosen:
                break
            queries = self._new(self._queries_for(item))
            if queries:
                chosen += queries
                left -= w
        self.rounds += 1
        return chosen

    def _queries_for(self, item: Open) -> Iterable[Query]:
        index = self.index_of.get(item.text)
        if index is None:
            return []
        if item.kind == "node":
            return [] if item.mass < self.node_cutoff else [Query("node", index)]
        if item.kind == "tail":
            return [Query("tail", index)]
        lookup = self.lookups[index]
        followed = self.after.get(index, {})
        return [
            Query("point", index, mark)
            for mark in self.facts.point_ids
            if mark not in followed and prob(lookup.get(mark)) >= POINT_FLOOR
        ]

    def _new(self, queries: Iterable[Query]) -> list[Query]:
        out = [q for q in queries if q not in self.asked]
        self.asked.update(out)
        return out
