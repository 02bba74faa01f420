"""The friends report's descriptive tables (exploratory, no verdicts): pattern scores letter by
letter per writer group, the primary outcome per group against both controls, identity-check
rates, and the rule that picks example exchanges. Intervals are over role cards, by the design's
[analysis] interval (jackknife t by default, leaving out whole cards; or a cluster bootstrap).
A writer group is the condition seen from one writer: their own profile and their friend's
(seat A of condition X+Y and seat B of Y+X are both "X → Y")."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from diarylab.experiments.analysis.bootstrap import BootstrapSettings, cluster_bootstrap, mean_of
from diarylab.experiments.kinds.friends.contrast import (
    FIXED,
    UNSTEERED,
    OutcomeContrast,
    WriterGroup,
)
from diarylab.experiments.kinds.friends.outcomes import pattern_scores, per_card, readable
from diarylab.experiments.kinds.friends.tasks import IDENTITY

CARD = "card"  # the role-card column of the letter and outcome tables


def interval(table: pd.DataFrame, column: str, settings: BootstrapSettings) -> dict[str, float]:
    """estimate/low/high of the mean of `column` over role cards (a bootstrap gets a fresh
    generator from the same seed per row, so one row's interval does not depend on the
    others)."""
    if table.empty:
        return {"estimate": np.nan, "low": np.nan, "high": np.nan}
    found = cluster_bootstrap(
        table,
        mean_of(column),
        cluster=settings.cluster,
        resamples=settings.resamples,
        seed=settings.seed,
        level=settings.level,
        method=settings.method,
    )
    return {"estimate": found.estimate, "low": found.low, "high": found.high}


def group_label(profile: str, friend: str) -> str:
    return f"{profile} → {friend}"


def groups(frame: pd.DataFrame) -> list[tuple[str, str]]:
    """Writer groups in a fixed order: unsteered first, then by own profile, fixed friend last."""
    found = {
        (str(p), str(f)) for p, f in zip(frame["profile"], frame["friend_profile"], strict=True)
    }

    def rank(group: tuple[str, str]) -> tuple[int, str, int, str]:
        own, friend = group
        return (own != UNSTEERED, own, friend == FIXED, friend)

    return sorted((g for g in found if g[0] != FIXED), key=rank)


def by_letter(letters: pd.DataFrame, settings: BootstrapSettings) -> pd.DataFrame:
    """Per judge × writer group × scored pattern × the writer's letter number: the mean pattern
    score with its bootstrap band (the plot's lines)."""
    rows = pattern_scores(letters)
    out = []
    for (judge, profile, friend, score, k), part in rows.groupby(
        ["judge", "profile", "friend_profile", "score", "letter_index"]
    ):
        out.append(
            {"judge": judge, "profile": profile, "friend_profile": friend, "score": score}
            | {"letter": int(k), "n_letters": len(part), "n_cards": part[CARD].nunique()}
            | interval(part, "value", settings)
        )
    columns = ["judge", "profile", "friend_profile", "score", "letter", "n_letters", "n_cards"]
    return pd.DataFrame(out, columns=[*columns, "estimate", "low", "high"])


def versus_controls(outcomes: pd.DataFrame, settings: BootstrapSettings) -> pd.DataFrame:
    """Per judge × writer group × scored pattern: the primary outcome, and the same cards'
    outcome minus two unsteered friends' and minus writers of the same profile whose friend
    sent the fixed letter (per card, then bootstrapped over cards)."""
    rows = []
    unsteered = WriterGroup(writer=UNSTEERED, friend=UNSTEERED)
    # Every role card the run wrote for: a group's row with fewer lost cards (unwritten or
    # unreadable outcomes), shown beside n_cards so a reader sees it before the estimate.
    expected = int(outcomes[CARD].nunique()) if len(outcomes) else 0
    for judge in sorted(outcomes["judge"].unique()):
        mine = outcomes[outcomes["judge"] == judge]
        for own, friend in groups(mine):
            group = WriterGroup(writer=own, friend=friend)
            for score in sorted(mine["score"].unique()):
                row = mine[(mine["profile"] == own) & (mine["friend_profile"] == friend)]
                row = row[(row["score"] == score) & row["outcome"].notna()]
                found = {"judge": judge, "profile": own, "friend_profile": friend, "score": score}
                found |= {"n_writers": len(row), "n_cards": row["card"].nunique()}
                found |= {"n_cards_expected": expected}
                found |= _prefixed("", interval(row, "outcome", settings))
                for name, against in (
                    ("vs_unsteered_", unsteered),
                    ("vs_fixed_", WriterGroup(writer=own, friend=FIXED)),
                ):
                    if against == group or (own == UNSTEERED and name == "vs_fixed_"):
                        found |= _prefixed(name, dict.fromkeys(("estimate", "low", "high"), np.nan))
                        continue
                    contrast = OutcomeContrast(
                        kind="outcome", score=score, of=group, against=against
                    )
                    cards = per_card(contrast, mine, judge).dropna(subset=["diff"])
                    found |= _prefixed(name, interval(cards, "diff", settings))
                rows.append(found)
    return pd.DataFrame(rows)


def identity_rates(letters: pd.DataFrame, settings: BootstrapSettings) -> pd.DataFrame:
    """Per judge × writer group: the share of letters the identity check says stay true to
    their writer's life (P(yes) ≥ 0.5) and the mean P(yes), bootstrapped over cards."""
    rows = readable(letters[letters["item"] == IDENTITY])
    rows = rows.assign(yes=(rows["value"] >= 0.5).astype(float))
    out = []
    for (judge, profile, friend), part in rows.groupby(["judge", "profile", "friend_profile"]):
        out.append(
            {"judge": judge, "profile": profile, "friend_profile": friend}
            | {"n_letters": len(part), "n_cards": part["card"].nunique()}
            | _prefixed("share_", interval(part, "yes", settings))
            | _prefixed("mean_p_", interval(part, "value", settings))
        )
    return pd.DataFrame(out)


def own_score(outcomes: pd.DataFrame) -> pd.DataFrame:
    """Each writer's outcome on their own pattern (unsteered: the mean over all patterns)."""
    own = outcomes[(outcomes["pattern"] == outcomes["score"]) | (outcomes["profile"] == UNSTEERED)]
    keys = ["judge", "pair_id", "condition", "seat"]
    return own.groupby(keys)["outcome"].mean().reset_index()


EXAMPLE_RULE = (
    "For each condition, two pairs: the pair whose pair score is the condition's median (the "
    "lower middle one when the count is even) and the pair with the highest pair score; ties go "
    "to the first pair id in alphabetical order. A pair score is the mean, over the pair's "
    "model-written seats, of each writer's primary outcome on their own pattern (for an "
    "unsteered writer the mean over all patterns), read by the design's first judge."
)


def example_pairs(outcomes: pd.DataFrame, judge: str) -> dict[str, list[str]]:
    """Condition -> the pair ids EXAMPLE_RULE picks (the median pair, then the highest)."""
    scores = own_score(outcomes[outcomes["judge"] == judge])
    per_pair = scores.groupby(["condition", "pair_id"])["outcome"].mean().reset_index()
    picked: dict[str, list[str]] = {}
    for condition, part in per_pair.groupby("condition"):
        ranked = part.sort_values(["outcome", "pair_id"], kind="stable").reset_index(drop=True)
        median = ranked.loc[(len(ranked) - 1) // 2, "pair_id"]
        top = ranked.sort_values(["outcome", "pair_id"], ascending=[False, True]).iloc[0]
        picked[str(condition)] = _unique([str(median), str(top["pair_id"])])
    return picked


def _prefixed(prefix: str, values: dict[str, float]) -> dict[str, float]:
    return {f"{prefix}{k}": v for k, v in values.items()}


def _unique(ids: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(ids))
