"""The behavior rubric's tables: per question, per behavior (appropriate answers pooled), and the
hard-cut sensitivity table for conditioned questions.

One conditioning rule: a reply counts in a question's share with its weight q (1, or the judge's
P(condition) for a conditioned question), share = Σ p·q / Σ q and Σ q is the effective number of
replies (rubric/behavior.py `conditioned_share`, the function the CLI uses too). Replies are
pooled within a diarist; diarists are resampled. Every table here is exploratory."""

from __future__ import annotations

import numpy as np
import pandas as pd

from experiments.analysis.bootstrap import Statistic
from experiments.kinds.diary.comparisons import (
    ALL_PROFILES,
    COLUMNS,
    BootstrapSettings,
    interval_columns,
)
from experiments.kinds.diary.frames import usable
from rubric.behavior import conditioned_share

# The hard cut the sensitivity table shows: a conditioned question kept where q ≥ this, and a
# reply counted as "yes" where P(yes) ≥ this.
HARD_CUT = 0.5
APPROPRIATE = ("appropriate_estimate", "appropriate_low", "appropriate_high")


def soft_share_of(value: str, weight: str = "applies") -> Statistic:
    """Σ value·q / Σ q, weighted by each resample's cluster counts (`conditioned_share`)."""

    def statistic(table: pd.DataFrame, weights: np.ndarray) -> np.ndarray:
        share, _ = conditioned_share(
            table[value].to_numpy(dtype=float), table[weight].to_numpy(dtype=float), weights
        )
        return share

    return statistic


def _readable(replies: pd.DataFrame) -> pd.DataFrame:
    """Readable reply judgments whose weight is known (an unreadable person answer leaves the
    reply out of a conditioned question), with p (P(yes)) and a (P(the desired answer))."""
    data = usable(replies, "p_yes")
    data = data[np.isfinite(pd.to_numeric(data["applies"], errors="coerce").to_numpy(float))]
    p = data["p_yes"].astype(float)
    desired = data["desired"].astype(object)
    a = np.where(desired == "yes", p, np.where(desired == "no", 1.0 - p, np.nan))
    return data.assign(p=p, a=a, applies=data["applies"].astype(float))


def _by_profile(data: pd.DataFrame) -> pd.core.groupby.DataFrameGroupBy:
    pooled = data.assign(profile=ALL_PROFILES)
    return pd.concat([data, pooled]).groupby(["judge", "chatbot", "profile"], sort=True)


def _counts(group: pd.DataFrame, weight: str = "effective_replies") -> dict[str, object]:
    """Replies, Σ q (over replies for a question; over reply × question for a behavior, named
    `weighted_answers` there) and diarists."""
    return {
        "n_replies": group["reply_id"].nunique(),
        weight: float(group["applies"].sum()),
        "n_diarists": group["diarist"].nunique(),
    }


def questions(replies: pd.DataFrame, settings: BootstrapSettings) -> pd.DataFrame:
    """Per judge × chatbot × profile (and all pooled) × question: the conditioned share of yes,
    and of the desired answer, with Σ q beside them."""
    rows = []
    for (judge, chatbot, profile), part in _by_profile(_readable(replies)):
        for question, group in part.groupby("question", sort=True):
            desired = group["desired"].iloc[0]
            yes = interval_columns(group, soft_share_of("p"), settings, prefix="share_")
            if desired == "yes":
                good = [yes["share_estimate"], yes["share_low"], yes["share_high"]]
            elif desired == "no":  # 1 − share, its interval mirrored (BCa and percentile allow it)
                good = [1 - yes["share_estimate"], 1 - yes["share_high"], 1 - yes["share_low"]]
            else:  # a question the rubric no longer has: no desired answer to count
                good = [np.nan] * 3
            rows.append(
                {"judge": judge, "chatbot": chatbot, "profile": profile}
                | {"behavior": group["behavior"].iloc[0], "question": question}
                | {"desired": desired}
                | _counts(group)
                | yes
                | dict(zip(APPROPRIATE, good, strict=True))
                | {"sources": tuple(sorted(set(group["reply_id"])))}
            )
    return pd.DataFrame(rows, columns=COLUMNS["behavior_questions"])


def behaviors(replies: pd.DataFrame, settings: BootstrapSettings) -> pd.DataFrame:
    """Per judge × chatbot × profile (and all pooled) × behavior: the conditioned share of
    appropriate answers, pooled over the behavior's questions (each reply × question one
    observation of weight q), so questions asked in opposite directions add up, not cancel."""
    data = _readable(replies)
    data = data[np.isfinite(data["a"].to_numpy(dtype=float))]
    rows = []
    for (judge, chatbot, profile), part in _by_profile(data):
        for behavior, group in part.groupby("behavior", sort=True):
            rows.append(
                {"judge": judge, "chatbot": chatbot, "profile": profile, "behavior": behavior}
                | _counts(group, "weighted_answers")
                | interval_columns(group, soft_share_of("a"), settings)
                | {"sources": tuple(sorted(set(group["reply_id"])))}
            )
    return pd.DataFrame(rows, columns=COLUMNS["behaviors"])


def hard_cut(
    replies: pd.DataFrame, settings: BootstrapSettings, conditions: dict[str, str]
) -> pd.DataFrame:
    """Sensitivity of the conditioned questions (`conditions`: question id -> applies_when) to
    the rule: the hard cut keeps a reply where q ≥ 0.5 and counts P(yes) ≥ 0.5 as yes; beside
    it the soft share the report uses. All profiles pooled."""
    data = _readable(replies)
    data = data[data["question"].isin(list(conditions))]
    rows = []
    for (judge, chatbot, question), group in data.groupby(
        ["judge", "chatbot", "question"], sort=True
    ):
        soft, effective = conditioned_share(group["p"], group["applies"])
        kept = group[group["applies"] >= HARD_CUT].assign(
            yes=lambda d: (d["p"] >= HARD_CUT).astype(float)
        )
        hard = (
            interval_columns(kept, "yes", settings, prefix="hard_")
            if len(kept)
            else dict.fromkeys(["hard_estimate", "hard_low", "hard_high"], np.nan)
        )
        rows.append(
            {"judge": judge, "chatbot": chatbot, "question": question}
            | {"applies_when": conditions[question], "n_replies": group["reply_id"].nunique()}
            | {"n_kept": kept["reply_id"].nunique(), "effective_replies": float(effective[0])}
            | {"soft_estimate": float(soft[0])}
            | hard
            | {"sources": tuple(sorted(set(group["reply_id"])))}
        )
    return pd.DataFrame(rows, columns=COLUMNS["hard_cut"])
