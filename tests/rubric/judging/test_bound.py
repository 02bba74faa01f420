"""Bounded readings (trie-v3, rubric/judging/bound.py and rubric/judging/bounded_walk.py) against
brute force:
on random judges — every next-token distribution drawn at random, from flat to sharply peaked —
the exact E[n] and coverage, computed number by number from the definitions alone, must lie
inside the certified interval of every bounded reading, the reported mean within max_error of
the exact one, and max_error 0 must give the brute-force distribution itself. Answers come as a
local model's (every needed id) or as a server's top-k first (a tail left unseen)."""

from __future__ import annotations

import math
import random

import pytest

from diarylab.rubric.judging.bound import Bound, Open, bound_of, number_range
from diarylab.rubric.judging.bounded_walk import Walk
from diarylab.rubric.judging.expected import NUMBERS, POINT_FLOOR
from diarylab.rubric.judging.number_reading import number_reading
from diarylab.rubric.judging.number_trie import NumberTrie, TrieNode
from diarylab.rubric.judging.vocab import VocabFacts

# ids: 0..9 the digits, 10 ".", 11 ",", 12 ".5", 13 "\n", 14 "x", 15 "25" (a digit run)
FACTS = VocabFacts(
    continuation_ids=(*range(10), 15),
    yes_ids=(),
    no_ids=(),
    raw_tokens=(*"0123456789", ".", ",", ".5", "\n", "x", "25"),
    point_ids=(10, 11),
    decimal_ids=(12,),
)
VOCAB = 16


def digit_trie() -> NumberTrie:
    texts = sorted({str(n)[:i] for n in NUMBERS for i in range(1, len(str(n)) + 1)} | {""})
    texts.sort(key=lambda t: (len(t), t))
    nodes = []
    for text in texts:
        kids = tuple((d, int(d)) for d in "0123456789" if text + d in texts)
        nodes.append(TrieNode(tuple(int(c) for c in text), text, kids))
    return NumberTrie((99,), tuple(nodes))


class RandomJudge:
    """A next-token distribution for every token sequence, drawn once per sequence from a seeded
    Dirichlet-like draw; `sharp` > 1 concentrates it (a real judge's confident answer)."""

    def __init__(self, seed: int, sharp: float) -> None:
        self.seed, self.sharp = seed, sharp
        self.rows: dict[tuple[int, ...], list[float]] = {}
        self.queries = 0

    def row(self, seq: tuple[int, ...]) -> list[float]:
        if seq not in self.rows:
            rng = random.Random(hash((self.seed, seq)))
            weights = [rng.random() ** self.sharp for _ in range(VOCAB)]
            if rng.random() < 0.3:  # now and then a mark likely enough to be followed
                weights[10] += rng.random()
            total = sum(weights)
            self.rows[seq] = [w / total for w in weights]
        return self.rows[seq]

    def logs(self, seq: tuple[int, ...], ids: list[int] | range) -> dict[int, float]:
        self.queries += 1
        row = self.row(seq)
        return {i: math.log(row[i]) for i in ids}

    def top(self, seq: tuple[int, ...], k: int) -> dict[int, float]:
        self.queries += 1
        row = self.row(seq)
        best = sorted(range(VOCAB), key=lambda i: -row[i])[:k]
        return {i: math.log(row[i]) for i in best}


def brute_force(judge: RandomJudge) -> list[float]:
    """P(n) straight from the definitions: the digits' probabilities, times the chance the
    number ends — neither a digit-led token, nor a decimal, nor a likely mark a digit follows
    (an unlikely mark counts as uncovered whole)."""
    out = []
    for n in NUMBERS:
        seq: tuple[int, ...] = (99,)
        p = 1.0
        for c in str(n):
            p *= judge.row(seq)[int(c)]
            seq = (*seq, int(c))
        row = judge.row(seq)
        end = 1.0 - sum(row[i] for i in (*range(10), 15)) - row[12]
        for mark in (10, 11):
            if row[mark] >= POINT_FLOOR:
                end -= row[mark] * sum(judge.row((*seq, mark))[i] for i in (*range(10), 15))
            else:
                end -= row[mark]
        out.append(p * end)
    return out


def walk(judge: RandomJudge, max_error: float, top_k: int = 0) -> Walk:
    trie = digit_trie()
    w = Walk(trie, FACTS, max_error)
    while queries := w.next_queries():
        for q in queries:
            node = trie.nodes[q.index]
            seq = (*trie.prompt_ids, *node.ids)
            if q.mark is not None:
                w.answer_point(q.index, q.mark, judge.logs((*seq, q.mark), FACTS.continuation_ids))
            elif q.kind == "node" and top_k and node.is_number:
                w.answer_node(q.index, judge.top(seq, top_k))
            else:
                w.answer_node(q.index, judge.logs(seq, list(trie.needed_ids(node, FACTS))))
    return w


def exact_of(dist: list[float]) -> tuple[float, float]:
    coverage = sum(dist)
    return sum(n * p for n, p in zip(NUMBERS, dist, strict=True)) / coverage, coverage


CASES = [(seed, sharp) for seed in range(12) for sharp in (1.0, 4.0, 12.0)]


@pytest.mark.parametrize("seed,sharp", CASES)
@pytest.mark.parametrize("top_k", [0, 4])
@pytest.mark.parametrize("max_error", [0.05, 1.0])
def test_the_exact_value_lies_inside_the_bound(seed, sharp, top_k, max_error):
    judge = RandomJudge(seed, sharp)
    mean, coverage = exact_of(brute_force(judge))
    w = walk(judge, max_error, top_k)
    reading = number_reading(w.nodes().values(), floor=0.0)
    bound = reading.bound
    assert bound is not None and bound.mean is not None
    eps = 1e-9
    assert bound.mean[0] - eps <= mean <= bound.mean[1] + eps
    assert bound.coverage[0] - eps <= coverage <= bound.coverage[1] + eps
    assert reading.coverage == pytest.approx(bound.coverage[0])
    # the reported mean is inside, and within max_error of the exact one (unless the walk ran
    # out of things to ask, which only an incomplete tail could cause: never here)
    assert bound.mean[0] - eps <= reading.mean <= bound.mean[1] + eps
    assert bound.error_of(reading.mean) <= max_error + eps
    assert abs(reading.mean - mean) <= max_error + eps


@pytest.mark.parametrize("seed,sharp", CASES[:9])
def test_max_error_zero_is_brute_force(seed, sharp):
    judge = RandomJudge(seed, sharp)
    brute = brute_force(judge)
    reading = number_reading(walk(judge, 0.0).nodes().values(), floor=0.0)
    for a, b in zip(reading.distribution, brute, strict=True):
        assert a == pytest.approx(b, abs=1e-12)
    assert reading.bound is not None and reading.bound.open_mass == pytest.approx(0, abs=1e-15)
    assert reading.bound.mean == pytest.approx((exact_of(brute)[0],) * 2)


def test_a_confident_judge_is_read_in_a_few_queries():
    # A judge that puts nearly everything on a few numbers is read from a handful of nodes; the
    # max_error 0 asks every node that has any mass, and every likely mark.
    for seed in range(10):
        bounded, full = RandomJudge(seed, 40.0), RandomJudge(seed, 40.0)
        walk(bounded, 0.05)
        walk(full, 0.0)
        assert bounded.queries <= 30 and full.queries >= 2 * bounded.queries, seed


def test_the_interval_takes_the_worst_placement_of_each_open_mass():
    # 0.5 placed at 50; 0.1 open anywhere in 0..100: the mean can reach (25+10)/0.6 or 25/0.6.
    b = bound_of(0.5, 25.0, [Open("", "node", 0.1, 0, 100)])
    assert b.mean == pytest.approx((25 / 0.6, 35 / 0.6))
    assert b.coverage == pytest.approx((0.5, 0.6))
    # two opens: only those beyond the optimum are taken whole.
    b = bound_of(1.0, 50.0, [Open("9", "node", 0.1, 90, 99), Open("4", "node", 0.1, 40, 49)])
    assert b.mean[1] == pytest.approx((50 + 9.9) / 1.1)
    assert b.mean[0] == pytest.approx((50 + 4.0) / 1.1)
    assert Bound.from_record(b.to_record()) == b


def test_number_ranges_follow_the_digits():
    assert number_range("") == (0, 100) and number_range("1") == (1, 100)
    assert number_range("8") == (8, 89) and number_range(" 10") == (10, 100)
    assert number_range("85") == (85, 85)
