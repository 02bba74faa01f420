"""The friends kind's expansion: the shipped preregistration is 288 steered + 64 control pairs,
balanced so that within every condition each role card sits in each seat × writing order
equally often, never writes to itself, and expansion is deterministic."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest

from diarylab.experiments.cli import main
from diarylab.experiments.designs.opening import load_design
from diarylab.experiments.kinds.friends.pairs import Pair, condition_id
from diarylab.experiments.profiles.refs import profile_ids

SHIPPED = Path(__file__).resolve().parents[4] / "experiments" / "designs" / "friends.toml"
PATTERNS = ["social_isolation", "entitlement", "unrelenting_standards"]


@pytest.fixture(scope="module")
def pairs() -> list[Pair]:
    design = load_design(SHIPPED)
    return design.kind.cells(design, profile_ids(design))


def test_shipped_design_is_288_steered_and_64_control_pairs(pairs):
    by_condition = Counter(p.condition for p in pairs)
    steered = {condition_id(a, b) for a in PATTERNS for b in PATTERNS}
    assert len(steered) == 9
    assert {c: by_condition[c] for c in steered} == dict.fromkeys(steered, 32)
    assert by_condition["two_unsteered"] == 32 and by_condition["fixed_friend"] == 32
    assert sum(by_condition[c] for c in steered) == 288 and len(pairs) == 288 + 64
    assert len({p.id for p in pairs}) == len(pairs)


def test_every_card_sits_equally_often_in_each_seat_and_order(pairs):
    cards = sorted({p.card_a for p in pairs})
    assert len(cards) == 8
    for condition in {p.condition for p in pairs}:
        mine = [p for p in pairs if p.condition == condition]
        seats = Counter((p.card(s), s, p.first == s) for p in mine for s in ("A", "B"))
        # card × seat × (writes first or second): 8 × 2 × 2 cells of 2 pairs each
        assert seats == Counter({(c, s, f): 2 for c in cards for s in "AB" for f in (True, False)})
        assert all(p.card_a != p.card_b for p in mine)
        assert Counter(p.first for p in mine) == {"A": 16, "B": 16}


def test_controls_have_the_right_seats(pairs):
    unsteered = [p for p in pairs if p.condition == "two_unsteered"]
    assert {(p.profile_a, p.profile_b) for p in unsteered} == {("unsteered", "unsteered")}
    fixed = [p for p in pairs if p.condition == "fixed_friend"]
    assert {p.profile_b for p in fixed} == {"fixed"}
    # The steered writer's profile rotates so every card writes under every profile.
    assert {(p.card_a, p.profile_a) for p in fixed} == {
        (c, pattern) for c in {p.card_a for p in fixed} for pattern in PATTERNS
    }
    for condition in (p.condition for p in pairs if "+" in p.condition):
        a, b = condition.split("+")
        assert all((p.profile_a, p.profile_b) == (a, b) for p in pairs if p.condition == condition)


def test_letters_alternate_from_the_seat_that_writes_first(pairs):
    pair = next(p for p in pairs if p.first == "B")
    assert pair.order() == [("B", 1), ("A", 1), ("B", 2), ("A", 2), ("B", 3), ("A", 3)]
    other = next(p for p in pairs if p.first == "A")
    assert [s for s, _ in other.order()] == ["A", "B"] * 3


def test_expansion_is_deterministic_and_listed_by_design_expand(pairs, capsys):
    again = load_design(SHIPPED)
    assert [p.id for p in again.kind.cells(again, profile_ids(again))] == [p.id for p in pairs]
    assert main(["design", "expand", str(SHIPPED), "--json"]) == 0
    listed = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [row["id"] for row in listed] == [p.id for p in pairs]
    assert listed[0] == {
        "id": "social_isolation+social_isolation.amara.eero.a-first",
        "condition": "social_isolation+social_isolation",
        "card_a": "amara",
        "card_b": "eero",
        "profile_a": "social_isolation",
        "profile_b": "social_isolation",
        "first": "A",
        "letters": 3,
    }


def test_the_fixed_friend_seating_is_declared_and_the_contrast_weighs_profiles_equally(pairs):
    """32 fixed-friend pairs cannot seat three profiles equally: they sit 11/11/10, and each
    card writes under one profile twice and the others once. With writers whose profiles differ
    in level and no effect of friends at all, a per-card mean over writers would read that
    seating as an effect; the contrast weighs each writer group equally within a card, so it
    reads zero on every card."""
    from diarylab.experiments.kinds.friends.contrast import OutcomeContrast
    from diarylab.experiments.kinds.friends.outcomes import per_card, select

    fixed = [p for p in pairs if p.condition == "fixed_friend"]
    assert sorted(Counter(p.profile_a for p in fixed).values()) == [10, 11, 11]
    per_card_counts = Counter((p.card_a, p.profile_a) for p in fixed)
    assert sorted(Counter(per_card_counts.values()).items()) == [(1, 16), (2, 8)]
    level = {"social_isolation": 30.0, "entitlement": 60.0, "unrelenting_standards": 20.0}
    rows = []
    for p in pairs:
        for seat, other in (("A", "B"), ("B", "A")):
            profile = p.profile(seat)
            if profile == "fixed":
                continue
            rows.append(
                {"judge": "a", "score": "social_isolation", "card": p.card(seat)}
                | {"profile": profile, "pattern": profile, "friend_profile": p.profile(other)}
                | {"outcome": level.get(profile, 25.0), "sources": (f"{p.id}.{seat}",)}
            )
    outcomes = pd.DataFrame(rows)
    contrast = OutcomeContrast.model_validate(
        {"kind": "outcome", "score": "social_isolation"}
        | {"of": {"writer": "other", "friend": "social_isolation"}}
        | {"against": {"writer": "other", "friend": "fixed"}}
    )
    table = per_card(contrast, outcomes, "a")
    assert len(table) == 8 and table["diff"].abs().max() < 1e-9
    assert (table["n_against"] >= 2).all()
    # What a plain mean over each card's writers would read: a spurious effect on most cards.
    pooled = {}
    for side in ("of", "against"):
        chosen = outcomes[select(outcomes, getattr(contrast, side), "social_isolation")]
        pooled[side] = chosen.groupby("card")["outcome"].mean()
    spurious = (pooled["of"] - pooled["against"]).abs()
    assert (spurious > 1.0).sum() >= 4
