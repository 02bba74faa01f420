"""From a friends run's store to the tables its analysis reads, and the primary outcome.

`letter_table`: one row per letter × judge × item (pattern scores, coherence, identity), with
the letter's pair, seats and profiles. `writer_outcomes`: one row per writer (a pair's seat) ×
judge × score pattern: the mean of the writer's readable scores over the design's outcome
letters (by default their 2nd and 3rd, not the noisy first). `card_outcomes`: the same per role
card (the cluster) and writer group — the per-cluster table a pilot reads its noise from.
`per_card`: a contrast's value for each card (its writers in one group minus another)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from diarylab.experiments.engine.store import Store
from diarylab.experiments.kinds.friends.contrast import (
    FIXED,
    OTHER,
    STEERED,
    UNSTEERED,
    OutcomeContrast,
    WriterGroup,
)

LETTER_COLUMNS = (
    "letter_id", "pair_id", "condition", "seat", "card", "friend", "profile", "pattern",
    "friend_profile", "letter_index", "position", "judge", "item", "value", "coverage",
    "readable", "text",
)  # fmt: skip
JUDGED = ("judge", "item", "value", "coverage", "readable")  # the judgment's, beside its letter
WRITER_KEYS = ["pair_id", "seat", "condition", "card", "profile", "pattern", "friend_profile"]


def letter_table(store: Store) -> pd.DataFrame:
    # the letters table's `writer` is the card the letter's writer was cast from
    letter = ["writer" if c == "card" else c for c in LETTER_COLUMNS if c not in JUDGED]
    rows = store.with_judgments("letters", "letter_id", "letter", letter, JUDGED)
    named = ["card" if c == "writer" else c for c in letter]
    frame = pd.DataFrame(rows, columns=[*named, *JUDGED])[list(LETTER_COLUMNS)]
    frame["value"] = pd.to_numeric(frame["value"], errors="coerce").astype(float)
    frame["readable"] = frame["readable"].astype(bool)
    return frame


def readable(frame: pd.DataFrame) -> pd.DataFrame:
    """Unreadable judgments are missing data, never a score: left out here, counted in the
    report."""
    return frame[frame["readable"] & np.isfinite(frame["value"].to_numpy(dtype=float))]


def pattern_scores(letters: pd.DataFrame) -> pd.DataFrame:
    """Readable pattern-score rows, with the scored pattern in column 'score'."""
    rows = readable(letters[letters["item"].str.startswith("pattern:")])
    return rows.assign(score=rows["item"].str.removeprefix("pattern:"))


def writer_outcomes(letters: pd.DataFrame, outcome_letters: Sequence[int]) -> pd.DataFrame:
    """One row per writer × judge × score pattern: the mean over the writer's outcome letters
    (only those; a letter left unscored or unreadable is missing, not zero)."""
    rows = pattern_scores(letters)
    rows = rows[rows["letter_index"].isin(list(outcome_letters))]
    keys = [*WRITER_KEYS, "judge", "score"]
    grouped = rows.groupby(keys, dropna=False)
    out = grouped["value"].agg(outcome="mean", n_letters="count").reset_index()
    sources = grouped["letter_id"].agg(lambda ids: tuple(sorted(set(ids)))).rename("sources")
    return out.merge(sources.reset_index(), on=keys)


def select(outcomes: pd.DataFrame, group: WriterGroup, score: str) -> pd.Series:
    """Which writers a contrast's group selects (see contrast.py for the words)."""
    writer, friend = group.writer, group.friend
    steered = outcomes["profile"].ne(UNSTEERED) & outcomes["profile"].ne(FIXED)
    if writer == STEERED:
        mine = steered
    elif writer == OTHER:
        mine = steered & outcomes["pattern"].ne(score)
    else:
        mine = outcomes["profile"].eq(writer)
    if friend == STEERED:
        theirs = outcomes["friend_profile"].ne(UNSTEERED) & outcomes["friend_profile"].ne(FIXED)
    else:
        theirs = outcomes["friend_profile"].eq(friend)
    return mine & theirs


PER_CARD_COLUMNS = ["card", "of", "against", "diff", "n_of", "n_against", "sources"]


def per_card(contrast: OutcomeContrast, outcomes: pd.DataFrame, judge: str) -> pd.DataFrame:
    """The contrast for each role card under one judge: the outcome of the card's writers in
    `of` minus that of its writers in `against` (NaN when the card has none in either).

    A side's outcome is the mean over its writer groups (own profile → friend's profile) of
    each group's mean, so every group a side selects weighs the same in every card. The
    fixed_friend control cannot seat its three profiles equally over 32 pairs (it seats them
    11/11/10, and a card sees one profile twice and the others once): a plain mean over the
    card's writers would tilt "other" and "steered" toward whichever profile the card drew
    twice, a difference of profiles read as one of friends."""
    mine = outcomes[(outcomes["judge"] == judge) & (outcomes["score"] == contrast.score)]
    mine = mine[np.isfinite(mine["outcome"].to_numpy(dtype=float))]
    sides = {}
    for name in ("of", "against"):
        part = mine[select(mine, getattr(contrast, name), contrast.score)]
        by_group = part.groupby(["card", "profile", "friend_profile"]).agg(
            mean=("outcome", "mean"), n=("outcome", "count"), sources=("sources", _union)
        )
        sides[name] = by_group.groupby(level="card").agg(
            mean=("mean", "mean"), n=("n", "sum"), sources=("sources", _union)
        )
    cards = sorted(set(sides["of"].index) | set(sides["against"].index))
    rows = []
    for card in cards:
        of = sides["of"].loc[card] if card in sides["of"].index else None
        against = sides["against"].loc[card] if card in sides["against"].index else None
        a = float(of["mean"]) if of is not None else np.nan
        b = float(against["mean"]) if against is not None else np.nan
        ids = (of["sources"] if of is not None else ()) + (
            against["sources"] if against is not None else ()
        )
        rows.append(
            {
                "card": card,
                "of": a,
                "against": b,
                "diff": a - b,
                "n_of": 0 if of is None else int(of["n"]),
                "n_against": 0 if against is None else int(against["n"]),
                "sources": tuple(sorted(set(ids))),
            }
        )
    return pd.DataFrame(rows, columns=PER_CARD_COLUMNS)


def card_outcomes(outcomes: pd.DataFrame) -> pd.DataFrame:
    """Per judge × role card × writer group (own profile, friend's profile) × score pattern:
    the card's mean primary outcome and how many writers it averages. The per-cluster table a
    pilot estimates the between-card noise (and so a minimum detectable effect) from."""
    keys = ["judge", "card", "profile", "friend_profile", "score"]
    table = outcomes.groupby(keys, dropna=False)["outcome"].agg(outcome="mean", writers="count")
    return table.reset_index()


def _union(values: pd.Series) -> tuple[str, ...]:
    return tuple(sorted({i for ids in values for i in ids}))
