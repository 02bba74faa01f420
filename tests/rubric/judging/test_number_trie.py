"""Reading trie nodes from chosen log-probabilities (rubric/judging/number_trie.py): the same
arithmetic
for a local model's full vectors and a server's answers by id, with trie-v2's decimal rule and
exactness taken from what came back."""

from __future__ import annotations

import math

import pytest

from diarylab.rubric.judging.expected import POINT_FLOOR, prob
from diarylab.rubric.judging.number_reading import number_reading
from diarylab.rubric.judging.number_trie import (
    TrieNode,
    digits_after,
    number_trie,
    points_to_follow,
    read_node,
)
from diarylab.rubric.judging.vocab import VocabFacts, vocab_facts

# ids: 0..9 the digits, 10 ".", 11 ".5", 12 "\n", 13 "x"
FACTS = VocabFacts(
    continuation_ids=tuple(range(10)),
    yes_ids=(),
    no_ids=(),
    raw_tokens=(*"0123456789", ".", ".5", "\n", "x"),
    point_ids=(10,),
    decimal_ids=(11,),
)
EIGHT = TrieNode(ids=(8,), text="8", children=tuple((str(d), d) for d in range(10)))


def lookup(**p: float) -> dict[int, float]:
    names = {"d": 0, "point": 10, "dec": 11, "nl": 12, "x": 13}
    out = {i: math.log(1e-9) for i in range(14)}
    for name, value in p.items():
        out[names[name]] = math.log(value)
    return out


def test_a_complete_node_ends_with_what_no_continuation_takes():
    node = read_node(EIGHT, lookup(d=0.2, dec=0.1, nl=0.6), FACTS)
    assert node.end_exact
    # P(end) = 1 − digits (0.2 + nine at 1e-9) − decimal 0.1 − the bare mark (unfollowed: all of it)
    assert prob(node.end_logprob) == pytest.approx(0.7 - 1e-9 * 10, abs=1e-8)
    assert prob(node.decimal_logprob) == pytest.approx(0.1 + 1e-9, abs=1e-8)


def test_a_followed_mark_counts_only_the_digits_after_it():
    rows = lookup(nl=0.5, point=0.4)
    assert points_to_follow(EIGHT, rows, FACTS) == (10,)
    node = read_node(EIGHT, rows, FACTS, after_point={10: 0.25})
    # "8." then a digit (0.4 × 0.25 = 0.1) is a decimal; "8." then the end of the sentence is 8.
    assert prob(node.end_logprob) == pytest.approx(1 - 0.1 - 10e-9 - 1e-9, abs=1e-8)


def test_an_unlikely_mark_is_not_followed_and_counts_as_uncovered():
    rows = lookup(nl=0.99, point=POINT_FLOOR / 2)
    assert points_to_follow(EIGHT, rows, FACTS) == ()
    node = read_node(EIGHT, rows, FACTS)
    assert prob(node.end_logprob) < 1 - POINT_FLOOR / 2


def test_what_did_not_come_back_makes_the_node_inexact_with_a_lower_bound():
    rows = {8: math.log(0.1), 12: math.log(0.5), 13: math.log(0.2)}  # a server's top-3
    node = read_node(EIGHT, rows, FACTS)
    assert not node.end_exact
    assert prob(node.end_logprob) == pytest.approx(0.7)  # "\n" and "x": visible enders only
    assert node.children == {"8": math.log(0.1)}


def test_digits_after_a_mark_sum_every_digit_token():
    assert digits_after(lookup(d=0.3), FACTS) == pytest.approx(0.3 + 9e-9)


def test_the_trie_of_a_digit_tokenizer(shipped_tokenizer):
    trie = number_trie(shipped_tokenizer, "Score: ")
    assert len(trie.nodes) == 102 and trie.nodes[0].text == ""
    texts = [n.text for n in trie.nodes]
    assert texts.index("8") < texts.index("85")  # parents before children
    facts = vocab_facts(shipped_tokenizer)
    root, eight = trie.nodes[0], trie.nodes[texts.index("8")]
    assert set(trie.needed_ids(root, facts)) == {i for _, i in root.children}
    assert set(facts.leaving_ids) <= set(trie.needed_ids(eight, facts))
    assert facts.point_ids and set(facts.point_ids).isdisjoint(facts.continuation_ids)


def test_a_reading_with_root_space_nodes_counts_both_ways_of_writing_a_number():
    from diarylab.rubric.judging.expected import NodeReading

    nodes = [
        NodeReading("", {" ": math.log(0.5), "8": math.log(0.3)}),
        NodeReading(" ", {"8": math.log(0.8)}),
        NodeReading(" 8", {}, end_logprob=math.log(0.5), end_exact=False),
        NodeReading("8", {}, end_logprob=math.log(1.0), end_exact=False),
    ]
    reading = number_reading(nodes, floor=0.0)
    assert reading.distribution[8] == pytest.approx(0.5 * 0.8 * 0.5 + 0.3)
    assert not reading.exact
