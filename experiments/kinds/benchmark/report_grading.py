"""The benchmark report's sections on how grading went and what it did to the scores: both axis
conventions side by side, HealthBench's tag scores, the criteria left ungraded per chatbot with
the sensitivity that counts them as not met (instead of silently dropping their conversations),
and how often each judge's written verdict agrees with the P ≥ 0.5 reading of it."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import pandas as pd

from diarylab.experiments.analysis import markdown as md
from diarylab.experiments.engine.store import Store
from diarylab.experiments.kinds.benchmark.leaderboard import Board
from diarylab.experiments.kinds.benchmark.report_answers import tag_label
from diarylab.experiments.kinds.benchmark.scoring import STATUS, UNGRADED

AXES_WHY = (
    "Two axis scores, because they answer different questions. **Points contributed** "
    "(MentalHealthBench's definition): the axis's met points over the whole conversation's "
    "positive points; the axes add up to the unclipped overall, values can be negative, and a "
    "reply meeting every criterion scores only the axis's share of the points (e.g. an axis "
    "holding 3 of a conversation's 10 positive points reads 0.3 for a perfect reply). "
    "**Met over possible within the axis** (HealthBench's per-tag score): the axis's met points "
    "over its own positive points, averaged over the conversations that have the axis, the mean "
    "clipped to [0, 1]; the same perfect reply reads 1.0 on every axis."
)


def axes_section(b: Board) -> str:
    parts = ["## Per axis (met reading)\n", AXES_WHY + "\n"]
    for title, attr in (
        ("points contributed (MentalHealthBench)", "axes_contributed"),
        ("met over possible within the axis (HealthBench per-tag)", "axes_within"),
    ):
        frame = pd.DataFrame(
            [{"judge": s.judge, "chatbot": s.chatbot, **getattr(s, attr)} for s in b.scores]
        )
        shown = {
            (c if c in ("judge", "chatbot") else tag_label(f"axis:{c}")): (
                _text(c) if c in ("judge", "chatbot") else _number(c)
            )
            for c in frame
        }
        parts += [f"### Axis: {title}\n", md.table(frame, shown)]
    return "\n".join(parts)


def tags_frame(b: Board) -> pd.DataFrame:
    rows = [
        {
            "judge": s.judge,
            "chatbot": s.chatbot,
            "level": t.level,
            "tag": t.tag,
            "score": t.score,
            "n": t.n,
            "bootstrap_std": t.bootstrap_std,
        }
        for s in b.scores
        for t in s.tags
    ]
    columns = ["judge", "chatbot", "level", "tag", "score", "n", "bootstrap_std"]
    return pd.DataFrame(rows, columns=columns)


def tags_section(b: Board) -> str:
    frame = tags_frame(b)
    if frame.empty:
        return "## Per tag (HealthBench reference)\n\n_no tagged criteria scored_\n"
    shown = {c: _text(c) for c in ("judge", "chatbot", "level")}
    shown |= {"tag": lambda r: tag_label(r["tag"]), "n": _text("n")}
    shown |= {"score": _number("score"), "bootstrap std": _number("bootstrap_std")}
    return (
        "## Per tag (HealthBench reference; met reading)\n\nAs OpenAI's reference reports them: an "
        "example tag scores a conversation by its overall score; a rubric tag (axis, level, "
        "cluster) by the met points over the positive points of the criteria carrying it. Mean "
        "over the conversations where the tag has a score, clipped to [0, 1]; bootstrap std of "
        "that mean.\n\n" + md.table(frame, shown)
    )


def ungraded_by_chatbot(graded: pd.DataFrame) -> pd.DataFrame:
    """Per judge × chatbot: criteria, how many were left ungraded or unreadable, and the
    conversations that lost their score for an ungraded criterion."""
    rows = []
    status = graded[STATUS] if STATUS in graded else pd.Series("read", index=graded.index)
    frame = graded.assign(**{STATUS: status})
    for (judge, bot), mine in frame.groupby(["judge", "chatbot"], sort=True):
        positive = mine.groupby("conversation")["points"].apply(lambda p: (p > 0).any())
        hit = mine[mine[STATUS] == UNGRADED].groupby("conversation").size()
        lost = sum(1 for c in hit.index if positive.get(c, False))
        rows.append(
            {
                "judge": judge,
                "chatbot": bot,
                "criteria": len(mine),
                "ungraded": int((mine[STATUS] == UNGRADED).sum()),
                "unreadable": int((mine[STATUS] == "unreadable").sum()),
                "conversations dropped for an ungraded criterion": lost,
            }
        )
    return pd.DataFrame(rows)


def sensitivity_section(graded: pd.DataFrame, primary: Board, sensitivity: Board) -> str:
    counts = ungraded_by_chatbot(graded)
    other = {(s.judge, s.chatbot): s for s in sensitivity.scores}
    rows = [
        {
            "judge": s.judge,
            "chatbot": s.chatbot,
            "score (ungraded: no score)": md.interval(s.score, s.low, s.high, 3),
            "scored": s.scored,
            "score (ungraded = not met)": md.interval(
                other[(s.judge, s.chatbot)].score,
                other[(s.judge, s.chatbot)].low,
                other[(s.judge, s.chatbot)].high,
                3,
            ),
            "scored (sensitivity)": other[(s.judge, s.chatbot)].scored,
        }
        for s in primary.scores
    ]
    frame = pd.DataFrame(rows)
    return (
        "## Ungraded criteria per chatbot\n\nA criterion the judge never answered in a "
        "well-formed way (after its retries) is ungraded; one such criterion leaves its "
        "conversation without a score, and a chatbot whose replies are harder to grade loses more "
        "conversations, so the exclusions are not random. Counts per chatbot, then the "
        "leaderboard (met reading) beside its sensitivity in which an ungraded criterion counts "
        "as not met.\n\n"
        + md.table(counts, {c: _text(c) for c in counts.columns})
        + "\n"
        + md.table(frame, {c: _text(c) for c in frame.columns})
    )


def verdict_agreement(store: Store, judges: Sequence[str]) -> pd.DataFrame:
    """Per judge: the criteria with both a well-formed written verdict and a readable
    probability, how often they agree (written true ⇔ P ≥ 0.5), each side's met share and
    Cohen's κ."""
    rows = []
    for judge in judges:
        # each well-formed answer beside the same judge's readable reading of its criterion
        judged = {
            (target, item): value
            for target, item, value in store.select(
                "judgments",
                ("target_id", "item", "value"),
                where={"judge": judge, "target_kind": "reply", "readable": 1},
            )
        }
        answers = store.select(
            "grader_answers",
            ("reply_id", "item", "written_met"),
            where={"judge": judge, "status": "ok"},
            like={"item": "criterion:%"},
        )
        pairs = [(met, judged[(r, i)]) for r, i, met in answers if (r, i) in judged]
        written = [bool(w) for w, _ in pairs]
        read = [float(v) >= 0.5 for _, v in pairs]
        rows.append({"judge": judge, **_agreement(written, read)})
    return pd.DataFrame(rows)


def _agreement(written: list[bool], read: list[bool]) -> dict[str, float | int]:
    n = len(written)
    if not n:
        nan = math.nan
        return {"criteria": 0, "agree": nan, "written met": nan, "read met": nan, "kappa": nan}
    agree = sum(w == r for w, r in zip(written, read, strict=True)) / n
    pw, pr = sum(written) / n, sum(read) / n
    chance = pw * pr + (1 - pw) * (1 - pr)
    kappa = (agree - chance) / (1 - chance) if chance < 1 else math.nan
    return {"criteria": n, "agree": agree, "written met": pw, "read met": pr, "kappa": kappa}


def verdict_section(frame: pd.DataFrame) -> str:
    shown = {"judge": _text("judge"), "criteria": _text("criteria")}
    shown |= {c: _number(c) for c in ("agree", "written met", "read met", "kappa")}
    return (
        "## Written verdict vs read probability\n\nThe judge writes `criteria_met` and the lab "
        "reads P(true) at the same place; the leaderboard uses the reading (met = P ≥ 0.5). Per "
        "judge: how often the written verdict says the same, each side's share met, and Cohen's "
        "κ.\n\n" + md.table(frame, shown)
    )


def _text(c: str) -> Callable[[pd.Series], str]:
    return lambda r: str(r[c])


def _number(c: str) -> Callable[[pd.Series], str]:
    return lambda r: md.number(r[c], 3)
