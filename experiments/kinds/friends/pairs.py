"""Expanding a friends design into pairs (its cells), with stable ids. Pure and deterministic.

Every condition uses the same slots: for each shift s (a_first, then b_first) and each card i
(in [pairs].cards order), card i sits in seat A and card i+s (mod n) in seat B; shifts in
a_first have seat A write the first letter, those in b_first seat B. So within a condition each
card sits in each seat once per shift and, with equal lists, in each seat × order equally often;
no card writes to itself (shifts are 1..n-1). Conditions: every ordered pair of the steered
profiles for seats A and B; the two_unsteered control; the fixed_friend control, whose seat A
writer is steered (the profile rotating with card and shift, so every card writes under every
profile when there are at least as many shifts as profiles) and whose seat B friend is the
fixed letter. Its pairs cannot always seat the profiles equally (the shipped 32 over three
profiles: 11/11/10, each card one profile twice): the contrasts weigh each writer group
equally within a card instead (outcomes.per_card)."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

from diarylab.experiments.kinds.friends.contrast import FIXED, UNSTEERED
from diarylab.experiments.kinds.friends.schema import FriendsDesignFile

Seat = str  # "A" | "B"
SEATS: tuple[Seat, Seat] = ("A", "B")


@dataclass(frozen=True)
class Pair:
    id: str
    condition: str
    card_a: str
    card_b: str
    profile_a: str  # a profile id or "unsteered"
    profile_b: str  # a profile id, "unsteered", or "fixed" (the fixed letter; no model)
    first: Seat  # the seat that writes the first letter
    letters: int  # letters each seat writes

    def card(self, seat: Seat) -> str:
        return self.card_a if seat == "A" else self.card_b

    def profile(self, seat: Seat) -> str:
        return self.profile_a if seat == "A" else self.profile_b

    def letter_id(self, seat: Seat, k: int) -> str:
        return f"{self.id}.{seat}{k}"

    def order(self) -> list[tuple[Seat, int]]:
        """(seat, that seat's letter number) in writing order: the seats alternate."""
        second = other(self.first)
        return [(self.first if p % 2 == 0 else second, p // 2 + 1) for p in range(2 * self.letters)]


def other(seat: Seat) -> Seat:
    return "B" if seat == "A" else "A"


def condition_id(profile_a: str, profile_b: str) -> str:
    return f"{profile_a}+{profile_b}"


def expand(spec: FriendsDesignFile, steered_ids: Sequence[str]) -> list[Pair]:
    """Every pair of the design, in a fixed order: steered conditions (seat A's profile, then
    seat B's, in design order), then the controls in design order."""
    cards = spec.pairs.card_ids
    slots = [(s, "A") for s in spec.pairs.a_first] + [(s, "B") for s in spec.pairs.b_first]
    letters = spec.design.entries
    n = len(cards)

    def slot_pairs(condition: str, seats: list[tuple[str, str]]) -> list[Pair]:
        out = []
        for j, (shift, first) in enumerate(slots):
            for i, card in enumerate(cards):
                friend = cards[(i + shift) % n]
                profile_a, profile_b = seats[(i + j) % len(seats)]
                pid = f"{condition}.{card}.{friend}.{first.lower()}-first"
                out.append(Pair(pid, condition, card, friend, profile_a, profile_b, first, letters))
        return out

    pairs: list[Pair] = []
    for a in steered_ids:
        for b in steered_ids:
            pairs += slot_pairs(condition_id(a, b), [(a, b)])
    for control in spec.conditions.controls:
        if control == "two_unsteered":
            pairs += slot_pairs(control, [(UNSTEERED, UNSTEERED)])
        else:
            pairs += slot_pairs(control, [(p, FIXED) for p in steered_ids])
    return pairs


def letter_seed(design_seed: int, letter_id: str) -> int:
    """A letter's sampling seed, fixed by the design seed and the letter's place in the design
    (not by the order calls happen to run in), so a resumed run writes what an unbroken one
    would."""
    digest = hashlib.sha256(f"{design_seed}:letter:{letter_id}".encode()).digest()
    return int.from_bytes(digest[:4], "big")
