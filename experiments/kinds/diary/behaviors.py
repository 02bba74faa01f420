"""The behavior rubric's tables: per question, per behavior (appropriate answers pooled), and the
hard-cut sensitivity table for conditioned questions.

One conditioning rule: a reply counts in a question's share with its weight q (1, or the judge's
P(condition) for a conditioned question), share = Σ p·q / Σ q (rubric/behavior.py
`conditioned_share`, the function the CLI uses too). Σ q is the weights' total, not an effective
number of replies: that is Kish's n = (Σ q)² / Σ q², shown beside it. Replies are pooled within
a diarist; diarists are clustered. Every table here is exploratory.

The soft share is biased toward the unconditioned rate whenever P(condition) is soft: a reply
whose condition is absent still counts with weight q > 0, so with q = 0.8 where the condition
holds and 0.2 where it does not (30% of replies), a true conditioned rate of 0.9 against 0.1
reads 0.61; with an uninformative q = 0.5 everywhere it reads the unconditioned 0.34. The hard
cut (q ≥ 0.5) keeps exactly the replies with the condition in the first case; it is the table
to trust when q is informative but soft, and the report says so
(tests/experiments/kinds/diary/test_behaviors.py shows the bias)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from diarylab.experiments.analysis.bootstrap import Statistic, mean_of
from diarylab.experiments.analysis.bounded import near_bound, share_interval
from diarylab.experiments.kinds.diary.comparisons import (
    ALL_PROFILES,
    COLUMNS,
    BootstrapSettings,
)
from diarylab.experiments.kinds.diary.frames import usable
from diarylab.rubric.behavior import conditioned_share

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


def share_columns(
    group: pd.DataFrame,
    statistic: Statistic,
    settings: BootstrapSettings,
    prefix: str = "",
) -> dict[str, float | bool]:
    """estimate/low/high of a share over diarists, on the share's own scale (never outside
    [0, 1]; a unanimous sample keeps a width), and whether it sits near 0 or 1 where that
    interval's coverage is not held (`near_bound`): experiments/analysis/bounded.py."""
    found = share_interval(group, statistic, cluster=settings.cluster, level=settings.level)
    return {f"{prefix}estimate": found.estimate, f"{prefix}low": found.low} | {
        f"{prefix}high": found.high,
        "near_bound": near_bound(found.estimate),
    }


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


def kish_n(q: pd.Series | np.ndarray) -> float:
    """Kish's effective sample size of weights q: (Σ q)² / Σ q² (0 when every q is 0)."""
    q = np.asarray(q, dtype=float)
    square = float(np.sum(q**2))
    return float(np.sum(q)) ** 2 / square if square > 0 else 0.0


def _counts(group: pd.DataFrame, weight: str = "sum_q") -> dict[str, object]:
    """Replies, Σ q (over replies for a question; over reply × question for a behavior, named
    `weighted_answers` there), Kish's n of those weights, and diarists."""
    return {
        "n_replies": group["reply_id"].nunique(),
        weight: float(group["applies"].sum()),
        "kish_n": kish_n(group["applies"]),
        "n_diarists": group["diarist"].nunique(),
    }


def questions(replies: pd.DataFrame, settings: BootstrapSettings) -> pd.DataFrame:
    """Per judge × chatbot × profile (and all pooled) × question: the conditioned share of yes,
    and of the desired answer, with Σ q beside them."""
    rows = []
    for (judge, chatbot, profile), part in _by_profile(_readable(replies)):
        for question, group in part.groupby("question", sort=True):
            desired = group["desired"].iloc[0]
            yes = share_columns(group, soft_share_of("p"), settings, prefix="share_")
            if desired == "yes":
                good = [yes["share_estimate"], yes["share_low"], yes["share_high"]]
            elif desired == "no":  # 1 − share, its interval mirrored (Wilson's is symmetric)
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
                | share_columns(group, soft_share_of("a"), settings)
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
        soft, total = conditioned_share(group["p"], group["applies"])
        kept = group[group["applies"] >= HARD_CUT].assign(
            yes=lambda d: (d["p"] >= HARD_CUT).astype(float)
        )
        hard = (
            share_columns(kept, mean_of("yes"), settings, prefix="hard_")
            if len(kept)
            else dict.fromkeys(["hard_estimate", "hard_low", "hard_high"], np.nan)
            | {"near_bound": False}
        )
        rows.append(
            {"judge": judge, "chatbot": chatbot, "question": question}
            | {"applies_when": conditions[question], "n_replies": group["reply_id"].nunique()}
            | {"n_kept": kept["reply_id"].nunique(), "sum_q": float(total[0])}
            | {"kish_n": kish_n(group["applies"])}
            | {"soft_estimate": float(soft[0])}
            | hard
            | {"sources": tuple(sorted(set(group["reply_id"])))}
        )
    return pd.DataFrame(rows, columns=COLUMNS["hard_cut"])
