"""The expected-number algorithm: a 0–100 score read as a probability distribution over every
number the judge could write next, not the one it happened to sample.

Definitions (the same for every backend):

- A number n in 0..100 is written as str(n) ("7", "85", "100": no sign, no leading zeros).
- A *node* is the text written so far ("" before anything, then "8", "85", ...). Every non-empty
  prefix of str(n) for some n is itself a number, so every node but the root is a number.
- At a node the judge's next token is one of: a *child piece* (digits that keep the text a
  prefix of some str(n): "5" after "8"), a *continuation* (any token whose text starts with an
  ASCII digit 0-9: it makes the text a longer or different string of digits, e.g. "5" after "85"
  or "05"/"5th" anywhere), or anything else (space, newline, ".", "/", end of turn, a letter):
  the number ends there.
- P(n) = product of P(piece | node) along str(n)'s pieces × P(end | str(n)), where
  P(end | node) = 1 − Σ P(continuation tokens | node). Where a backend sees only some tokens (a
  server's top-20), P(end) is the sum over the *visible* tokens that do not continue the number:
  a lower bound, so P(n) is never overstated and the missing mass shows up as lower coverage.
- coverage = Σ P(n): the probability that the judge writes a valid number at all. Below the
  coverage floor the reading is unreadable: mean and mode are None, never a sampled number.
- mean = Σ n P(n) / coverage (normalised over valid numbers); mode = argmax P(n).

- trie-v2: a decimal is not an integer. At a number node, a token that starts with a decimal mark
  and a digit (".5") and the share of a bare mark ("." or ",") that digits would follow count as
  neither a continuation nor an end: they leave the 0–100 reading (uncovered mass), so "0.85" is
  never read as 0. A backend that reads a bare mark's probability of at least POINT_FLOOR asks
  what follows it (node + mark); below that, or unasked, the whole mark counts as uncovered —
  never as an end, so P(n) is never overstated.
- A server that reads the chat without a prompt's trailing space writes the space itself: the
  root then has a space child (" ") and space-led pieces (" 8"); the number is the digits after
  the space (node " 85" is 85). Backends that read after the space never produce those nodes.

- trie-v3: a reading may stop before every node is read (a judge's `max_error`,
rubric/judging/bound.py):
  what it did not learn — a node never read, the unseen tail of a node read by its top-k, a
  likely mark not followed — counts as uncovered in the distribution (so P(n) is never
  overstated), and is kept in the records, so that a certified interval for E[n] and for the
  coverage (`bound`) follows from the records alone. A reading that reads everything is the
  trie-v2 reading, unchanged.

A backend records one NodeReading per node it queried; the distribution is recomputed from those
records alone, so a stored judgment can be re-scored without the model."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from diarylab.foundation.errors import LabError

ALGORITHM = "trie-v3"  # bump when the definitions above change: part of every judge's identity
NUMBERS = tuple(range(101))
NUMBER_TEXTS = {str(n): n for n in NUMBERS}
# Every non-empty prefix of a valid number's text (all of them are numbers themselves).
NODE_TEXTS = frozenset(t[:i] for t in NUMBER_TEXTS for i in range(1, len(t) + 1))
SPACE = " "
# Nodes of a reading whose root wrote a space first (a chat server that drops the prefill's space).
SPACED_NODE_TEXTS = frozenset({SPACE} | {SPACE + t for t in NODE_TEXTS})
ALL_NODE_TEXTS = NODE_TEXTS | SPACED_NODE_TEXTS
DECIMAL_MARKS = frozenset(".,")
POINT_FLOOR = 1e-4  # a bare decimal mark at least this likely is followed up (see trie-v2)
DEFAULT_FLOOR = 0.5
LOG_ZERO = -9999.0  # stands for log(0) in JSON records (vLLM uses the same sentinel)
DIGITS = frozenset("0123456789")


def continues_number(piece: str) -> bool:
    """Does a token with this text, written right after digits, extend them into more digits?"""
    return bool(piece) and piece[0] in DIGITS


@lru_cache(maxsize=1 << 16)  # called per node and child for every round's bound
def is_child_piece(node: str, piece: str) -> bool:
    """Is `piece` a step from `node` toward some valid number? Only the root may take a space
    (alone or before digits)."""
    if not piece:
        return False
    digits = piece[1:] if node == "" and piece[0] == SPACE else piece
    return all(c in DIGITS for c in digits) and node + piece in ALL_NODE_TEXTS


def number_of(text: str) -> int | None:
    """The number a node has written ("85" and " 85" are 85), None for the root and " "."""
    return NUMBER_TEXTS.get(text[1:] if text.startswith(SPACE) else text)


def is_point(piece: str) -> bool:
    """A bare decimal mark: digits may follow it ("85." then "5"), or the sentence may end."""
    return piece in DECIMAL_MARKS


def is_decimal(piece: str) -> bool:
    """A token that writes a decimal mark and a digit at once (".5")."""
    return len(piece) > 1 and piece[0] in DECIMAL_MARKS and piece[1] in DIGITS


def ends_number(piece: str) -> bool:
    """After a number, does this token end it (neither more digits nor a possible decimal)?"""
    return not (continues_number(piece) or is_point(piece) or is_decimal(piece))


def safe_log(p: float) -> float:
    return math.log(p) if p > 0 else LOG_ZERO


def prob(logprob: float | None) -> float:
    if logprob is None or logprob <= LOG_ZERO:
        return 0.0
    return math.exp(logprob)


def logsumexp(values: Iterable[float]) -> float:
    vals = [v for v in values if v > LOG_ZERO]
    if not vals:
        return LOG_ZERO
    top = max(vals)
    return top + math.log(sum(math.exp(v - top) for v in vals))


@dataclass(frozen=True)
class NodeReading:
    """What one query at a node showed: log P(piece) for each child piece, and log P(the number
    ends here) (None at the root, or where the node was never queried). end_exact is False where
    the query saw only some tokens (a server's top-k): P(end) is then a lower bound from the
    visible tokens and children may be missing. decimal_logprob is log P(the number turns into
    a decimal here), the mass trie-v2 leaves uncovered (None where not computed).

    trie-v3 (rubric/judging/bound.py): unseen_logprob is log of the probability the query did
    not show at all (1 − Σ P(every token it saw); only where it saw too little to be complete), and
    open_point_logprob log P(a likely bare mark here that was not followed): mass whose number
    the reading did not learn. None where there is none."""

    prefix: str
    children: Mapping[str, float] = field(default_factory=dict)
    end_logprob: float | None = None
    end_exact: bool = True
    decimal_logprob: float | None = None
    unseen_logprob: float | None = None
    open_point_logprob: float | None = None

    def to_record(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "prefix": self.prefix,
            "children": dict(sorted(self.children.items())),
            "end_logprob": self.end_logprob,
            "end_exact": self.end_exact,
        }
        for name in ("decimal_logprob", "unseen_logprob", "open_point_logprob"):
            if getattr(self, name) is not None:
                out[name] = getattr(self, name)
        return out

    @staticmethod
    def from_record(record: Mapping[str, Any]) -> NodeReading:
        end = record.get("end_logprob")
        return NodeReading(
            prefix=str(record["prefix"]),
            children={str(k): float(v) for k, v in dict(record.get("children") or {}).items()},
            end_logprob=None if end is None else float(end),
            end_exact=bool(record.get("end_exact", True)),
            decimal_logprob=_optional(record, "decimal_logprob"),
            unseen_logprob=_optional(record, "unseen_logprob"),
            open_point_logprob=_optional(record, "open_point_logprob"),
        )


def _optional(record: Mapping[str, Any], name: str) -> float | None:
    value = record.get(name)
    return None if value is None else float(value)


def path_masses(nodes: Mapping[str, NodeReading]) -> dict[str, float]:
    """P(the judge has written exactly this text so far), summed over every way of writing it
    in pieces that the records show (one way for a local model's own tokenization)."""
    mass = {"": 1.0}
    for text in sorted(nodes, key=len):  # parents are shorter than children
        if text not in mass:
            continue
        for piece, logprob in nodes[text].children.items():
            child = text + piece
            if is_child_piece(text, piece):
                mass[child] = mass.get(child, 0.0) + mass[text] * prob(logprob)
    return mass


def distribution(
    nodes: Mapping[str, NodeReading], mass: Mapping[str, float] | None = None
) -> list[float]:
    """`mass`: path_masses(nodes), where the caller has it already."""
    mass = path_masses(nodes) if mass is None else mass
    out = [0.0] * len(NUMBERS)
    for text, node in nodes.items():
        n = number_of(text)
        if n is not None:
            out[n] += mass.get(text, 0.0) * min(prob(node.end_logprob), 1.0)
    return out


@dataclass(frozen=True)
class ReadingSummary:
    """What a judgment row keeps of a reading: its value (the mean of a 0–100 reading, P(yes)
    of a yes/no one; None when unreadable), its coverage, and whether it was readable."""

    value: float | None
    coverage: float
    readable: bool


def check_floor(floor: float) -> float:
    if not 0 <= floor <= 1:
        raise LabError(f"coverage floor {floor} is not in [0, 1]", where="coverage floor")
    return floor


DEFAULT_MAX_ERROR = 0.05  # points: a design judge's default (0 = read every node, trie-v2's way)


def check_max_error(max_error: float) -> float:
    if not 0 <= max_error <= 100:
        raise LabError(
            f"max_error {max_error} is not in [0, 100] points",
            where="judge max_error",
            fix="give how far a 0–100 reading may be from the exact one, e.g. 0.05; 0 = exact",
        )
    return float(max_error)
