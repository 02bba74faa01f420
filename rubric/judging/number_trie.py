"""The trie of a judge's numbers as token ids, and the reading of its nodes from log-probabilities
of chosen token ids: shared by every backend that reads a judge exactly (a local model's full
next-token vectors, a server's answers for explicit token ids), so both compute the same
numbers from the same floats.

A node is the token prefix of some number right after the prompt; what it needs to be read is
log P of its child tokens and, at a number, log P of every token that keeps the number from
ending there (VocabFacts.leaving_ids). A bare decimal mark that is likely enough (POINT_FLOOR)
is followed up at node + mark, where the digits that could come next are summed (trie-v2)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from math import exp
from typing import Any

from diarylab.foundation.errors import LabError
from diarylab.rubric.judging.expected import (
    LOG_ZERO,
    NUMBER_TEXTS,
    POINT_FLOOR,
    NodeReading,
    prob,
    safe_log,
)
from diarylab.rubric.judging.vocab import VocabFacts, number_tokens

Lookup = Mapping[int, float]  # token id → log-probability, for the ids a backend could read


@dataclass(frozen=True)
class TrieNode:
    ids: tuple[int, ...]  # tokens after the prompt
    text: str  # the digits they write
    children: tuple[tuple[str, int], ...]  # (piece text, token id) of each child

    @property
    def is_number(self) -> bool:
        return self.text in NUMBER_TEXTS


@dataclass(frozen=True)
class NumberTrie:
    prompt_ids: tuple[int, ...]
    nodes: tuple[TrieNode, ...]  # the root first, parents before children

    def needed_ids(self, node: TrieNode, facts: VocabFacts) -> tuple[int, ...]:
        """The ids whose log-probabilities read this node exactly."""
        return _needed_ids(node, facts)


def _needed_ids(node: TrieNode, facts: VocabFacts) -> tuple[int, ...]:
    # The same nodes are read for every prompt with the same tail: worked out once each, kept
    # with the vocabulary's facts (hashing the facts themselves would hash the whole vocabulary).
    known = facts.needed_by_node
    ids = known.get(node)
    if ids is None:
        wanted = {i for _, i in node.children}
        if node.is_number:
            wanted.update(facts.leaving_ids)
        ids = known[node] = tuple(sorted(wanted))
    return ids


def number_trie(
    tokenizer: Any, prompt_text: str, prompt_ids: tuple[int, ...] | None = None
) -> NumberTrie:
    """`prompt_ids`: the text's token ids where the renderer gave them (else it is encoded)."""
    numbers = number_tokens(tokenizer, prompt_text, prompt_ids)
    return NumberTrie(numbers.prompt_ids, _nodes(numbers.tokens, numbers.pieces))


@lru_cache(maxsize=64)
def _nodes(
    tokens: tuple[tuple[int, ...], ...], pieces: tuple[tuple[str, ...], ...]
) -> tuple[TrieNode, ...]:
    """The trie of these numbers' token paths: the same for every prompt with the same tail (a
    study's prompts end alike), so built once per tail (number_tokens keeps the tails)."""
    text_of: dict[tuple[int, ...], str] = {(): ""}
    written: set[str] = {""}
    children: dict[tuple[int, ...], list[tuple[str, int]]] = {(): []}
    for ids, parts in zip(tokens, pieces, strict=True):
        for k in range(1, len(ids) + 1):
            key, text = ids[:k], "".join(parts[:k])
            if key in text_of:
                continue
            if text in written:
                raise LabError(
                    f"two different token paths write {text!r}",
                    where="judge tokenizer",
                    fix="this tokenizer splits numbers inconsistently; use another judge",
                )
            text_of[key] = text
            written.add(text)
            children[key] = []
            children[key[:-1]].append((parts[k - 1], key[-1]))
    return tuple(
        TrieNode(key, text_of[key], tuple(children[key]))
        for key in sorted(text_of, key=lambda k: (len(k), k))
    )


def points_to_follow(node: TrieNode, lookup: Lookup, facts: VocabFacts) -> tuple[int, ...]:
    """The bare decimal marks after this number likely enough to ask what follows them."""
    if not node.is_number:
        return ()
    return tuple(i for i in facts.point_ids if prob(lookup.get(i)) >= POINT_FLOOR)


def digits_after(lookup: Lookup, facts: VocabFacts) -> float:
    """P(a digit comes next), from a read after a decimal mark."""
    return min(1.0, sum(prob(lookup.get(i)) for i in facts.continuation_ids))


def _total(logprobs: Iterable[float | None]) -> float:
    """sum(prob(lp) for lp in logprobs), in the same order (so the same float), without a
    call per id: a number node of o200k sums over a thousand."""
    return sum([0.0 if lp is None or lp <= LOG_ZERO else exp(lp) for lp in logprobs])


def read_node(
    node: TrieNode,
    lookup: Lookup,
    facts: VocabFacts,
    *,
    after_point: Mapping[int, float] | None = None,
) -> NodeReading:
    """A node's reading from the log-probabilities of its needed ids. `after_point` maps a
    followed-up mark to P(digit | node + mark); a likely mark not in it (POINT_FLOOR) counts as
    uncovered and is kept as open (trie-v3), an unlikely one is uncovered by definition.
    end_exact is True only when every needed id is in `lookup` (what came back, not what was
    asked); otherwise P(end) is the lower bound the visible ending tokens and followed marks
    give, and the mass the lookup did not show at all is kept as unseen."""
    kids = {}
    for piece, token in node.children:
        if token in lookup:
            kids[piece] = max(lookup[token], LOG_ZERO)  # no -inf in JSON
    seen = min(1.0, _total(lookup.values()))
    if not node.is_number:
        complete = all(token in lookup for _, token in node.children)
        unseen = None if complete else safe_log(max(0.0, 1.0 - seen))
        return NodeReading(prefix=node.text, children=kids, end_logprob=None, unseen_logprob=unseen)
    complete = facts.leaving_set <= lookup.keys()
    followed = after_point or {}
    cont = _total(map(lookup.get, facts.continuation_ids))
    decimal = _total(map(lookup.get, facts.decimal_ids))
    decimal += sum(prob(lookup.get(i)) * followed.get(i, 1.0) for i in facts.point_ids)
    marks_end = sum(
        prob(lookup.get(i)) * (1.0 - followed[i]) for i in facts.point_ids if i in followed
    )
    open_marks = sum(
        prob(lookup.get(i))
        for i in facts.point_ids
        if i not in followed and prob(lookup.get(i)) >= POINT_FLOOR
    )
    if complete:
        end = max(0.0, 1.0 - cont - decimal)
        unseen = None
    else:
        leaving = facts.leaving_set
        end = min(1.0, sum(prob(lp) for i, lp in lookup.items() if i not in leaving) + marks_end)
        unseen = safe_log(max(0.0, 1.0 - seen))
    return NodeReading(
        prefix=node.text,
        children=kids,
        end_logprob=safe_log(end),
        end_exact=complete,
        decimal_logprob=safe_log(decimal),
        unseen_logprob=unseen,
        open_point_logprob=safe_log(open_marks) if open_marks > 0 else None,
    )
