"""Synthetic friends letter tables (the columns of experiments/kinds/friends/outcomes.py), for
testing the outcome and the verdicts without a run."""

from __future__ import annotations

import numpy as np
import pandas as pd

from diarylab.experiments.kinds.friends.outcomes import LETTER_COLUMNS

CARDS = ["amara", "eero", "fatma", "kenji", "lucia", "marcus", "neha", "tomasz"]


def letters(
    judge_effects: dict[str, float],
    *,
    cards: list[str] = CARDS,
    first_letter: float = 0.0,
    noise: float = 1.0,
    seed: int = 0,
) -> pd.DataFrame:
    """Per card: one writer steered toward entitlement whose friend is steered toward social
    isolation ("contagion" group), and one whose friend sends the fixed letter; three letters
    each, scored for social isolation. Under each judge the contagion group's letters 2–3 score
    `effect` higher; letter 1 scores `first_letter` + noise for everyone."""
    rng = np.random.default_rng(seed)
    rows = []
    for judge, effect in judge_effects.items():
        for card in cards:
            for friend in ("si", "fixed"):
                pair = f"{friend}.{card}"
                for k in (1, 2, 3):
                    value = 40 + rng.normal(0, noise)
                    if k == 1:
                        value = first_letter + rng.normal(0, noise)
                    elif friend == "si":
                        value += effect
                    rows.append(
                        {
                            "letter_id": f"{pair}.A{k}",
                            "pair_id": pair,
                            "condition": "en+si" if friend == "si" else "fixed_friend",
                            "seat": "A",
                            "card": card,
                            "friend": "x",
                            "profile": "en",
                            "pattern": "entitlement",
                            "friend_profile": friend,
                            "letter_index": k,
                            "position": 2 * k - 1,
                            "judge": judge,
                            "item": "pattern:social_isolation",
                            "value": value,
                            "coverage": 1.0,
                            "readable": True,
                            "text": "...",
                        }
                    )
    return pd.DataFrame(rows, columns=list(LETTER_COLUMNS))
