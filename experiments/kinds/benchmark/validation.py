"""Grader validation: on benchmark conversations, where each reply's own clinician criteria give
the reference score, how well do candidate graders that need no such criteria agree with it?

Candidates (design field benchmark.validation):
- "borrowed_criteria": a pool of general criteria (borrowed_criteria.toml, the lab's own). Per
  conversation the judge says which apply (yes/no read by probability, P ≥ 0.5); the reply is
  then graded on those with the benchmark's grader (written answer, then P(met) read). Score:
  met points over positive points of the applicable criteria.
- "behavior_rubric": the lab's 15 yes/no questions about a reply (rubric/behavior_rubric.toml),
  asked of the benchmark conversation; the polarity in borrowed_criteria.toml makes them one
  score: the applicability-weighted mean of P(good answer).

Agreement per judge: Spearman ρ between candidate and reference over replies, and Kendall τ
between the chatbots' rankings by each, both with percentile intervals from a conversation
bootstrap."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, cast

import numpy as np
import pandas as pd
from scipy import stats

from diarylab.experiments.analysis import markdown as md
from diarylab.experiments.analysis.bootstrap import draw_counts
from diarylab.experiments.engine.store import Store
from diarylab.experiments.kinds.benchmark.data import Criterion
from diarylab.experiments.kinds.benchmark.schema import BenchmarkDesignFile
from diarylab.experiments.kinds.benchmark.scoring import per_conversation
from diarylab.experiments.kinds.benchmark.tables import judgments
from diarylab.experiments.kinds.benchmark.validation_tasks import (
    BEHAVIOR,
    BORROWED,
    PERSON,
    applicable,
    load_pool,
)
from diarylab.rubric.behavior_rubric import load_behavior_rubric

if TYPE_CHECKING:
    from diarylab.experiments.engine.contract import Design


def reply_scores(store: Store, design: Design, graded: pd.DataFrame) -> pd.DataFrame:
    """judge, chatbot, conversation, reference and each candidate's score per reply."""
    spec = cast(BenchmarkDesignFile, design.spec)
    convention = spec.benchmark.scoring
    replies = store.select("bench_replies", ("reply_id", "conversation_id", "chatbot"))
    read = {**judgments(store, BORROWED), **judgments(store, BEHAVIOR)}
    conv_read = _conversation_judgments(store)
    pool = {c.id: c for c in load_pool().criteria()}
    rows = []
    for judge in [j.id for j in spec.judges]:
        chosen = applicable(store, judge)
        for bot in sorted({r[2] for r in replies}):
            mine = graded[(graded.judge == judge) & (graded.chatbot == bot)]
            pc = per_conversation(mine, "met")
            reference = dict(zip(pc.conversations, pc.score, strict=True))
            for reply_id, conv, chatbot in replies:
                if chatbot != bot:
                    continue
                ref = reference.get(conv, math.nan)
                if convention == "mentalhealthbench" and not math.isnan(ref):
                    ref = min(max(ref, 0.0), 1.0)
                rows.append(
                    (
                        judge,
                        bot,
                        conv,
                        ref,
                        _borrowed(read, judge, reply_id, chosen.get(conv, []), pool),
                        _behavior(read, conv_read, judge, reply_id, conv),
                    )
                )
    return pd.DataFrame(
        rows,
        columns=[
            "judge",
            "chatbot",
            "conversation",
            "reference",
            "borrowed_criteria",
            "behavior_rubric",
        ],
    )


def _conversation_judgments(store: Store) -> dict[tuple[str, str, str], float]:
    rows = store.select(
        "judgments",
        ("judge", "target_id", "item", "value", "readable"),
        where={"target_kind": "conversation"},
        like={"item": PERSON + "%"},
    )
    return {(j, t, i): (float(v) if r and v is not None else math.nan) for j, t, i, v, r in rows}


def _borrowed(
    read: dict[tuple[str, str, str], tuple[float, float]],
    judge: str,
    reply_id: str,
    chosen: list[str],
    pool: dict[str, Criterion],
) -> float:
    positive = sum(pool[c].points for c in chosen if pool[c].points > 0)
    if positive <= 0:
        return math.nan
    got = 0.0
    for cid in chosen:
        p, _ = read.get((judge, reply_id, BORROWED + cid), (math.nan, 0.0))
        if math.isnan(p):
            return math.nan
        got += pool[cid].points * (p >= 0.5)
    return got / positive


def _behavior(
    read: dict[tuple[str, str, str], tuple[float, float]],
    person: dict[tuple[str, str, str], float],
    judge: str,
    reply_id: str,
    conv: str,
) -> float:
    polarity = load_pool().behavior_polarity
    good = set(polarity.good)
    total = weight = 0.0
    for q in load_behavior_rubric().questions:
        p, _ = read.get((judge, reply_id, BEHAVIOR + q.id), (math.nan, 0.0))
        if math.isnan(p):
            return math.nan
        w = 1.0
        if q.condition is not None:
            who, holds = q.condition
            pp = person.get((judge, conv, PERSON + who), math.nan)
            if math.isnan(pp):
                return math.nan
            w = pp if holds else 1.0 - pp
        total += w * (p if q.id in good else 1.0 - p)
        weight += w
    return total / weight if weight > 0 else math.nan


def agreement_table(scores: pd.DataFrame, resamples: int, seed: int) -> pd.DataFrame:
    out = []
    for judge, rows in scores.groupby("judge", sort=True):
        convs = sorted(set(rows.conversation))
        codes = rows.conversation.map({c: i for i, c in enumerate(convs)}).to_numpy()
        weights = draw_counts(len(convs), resamples, np.random.default_rng([seed, 7]))
        for candidate in ("borrowed_criteria", "behavior_rubric"):
            both = rows[["chatbot", "reference", candidate]].notna().all(axis=1).to_numpy()
            if not both.any() or rows[candidate].isna().all():
                continue
            sub, sub_codes = rows[both], codes[both]
            rho = _spearman(sub, candidate, np.ones(len(sub)))
            tau, bots = _kendall(sub, candidate, np.ones(len(sub)))
            rhos = [_spearman(sub, candidate, w[sub_codes]) for w in weights]
            taus = [_kendall(sub, candidate, w[sub_codes])[0] for w in weights]
            out.append((judge, candidate, len(sub), rho, *_ci(rhos), bots, tau, *_ci(taus)))
    return pd.DataFrame(
        out,
        columns=[
            "judge",
            "candidate",
            "replies",
            "rho",
            "rho_low",
            "rho_high",
            "chatbots",
            "tau",
            "tau_low",
            "tau_high",
        ],
    )


def _spearman(rows: pd.DataFrame, candidate: str, w: np.ndarray) -> float:
    keep = w > 0
    x = np.repeat(rows["reference"].to_numpy()[keep], w[keep].astype(int))
    y = np.repeat(rows[candidate].to_numpy()[keep], w[keep].astype(int))
    if len(x) < 3 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return math.nan
    return float(stats.spearmanr(x, y).statistic)


def _kendall(rows: pd.DataFrame, candidate: str, w: np.ndarray) -> tuple[float, int]:
    frame = rows.assign(w=w)
    frame = frame[frame.w > 0]
    means = frame.groupby("chatbot").apply(
        lambda g: pd.Series(
            {
                "ref": np.average(g["reference"], weights=g["w"]),
                "cand": np.average(g[candidate], weights=g["w"]),
            }
        ),
        include_groups=False,
    )
    if len(means) < 2:
        return math.nan, len(means)
    return float(stats.kendalltau(means["ref"], means["cand"]).statistic), len(means)


def _ci(values: Sequence[float]) -> tuple[float, float]:
    finite = np.array([v for v in values if not math.isnan(v)])
    if not finite.size:
        return math.nan, math.nan
    low, high = np.percentile(finite, [2.5, 97.5])
    return float(low), float(high)


def validation_section(store: Store, design: Design, graded: pd.DataFrame, resamples: int) -> str:
    spec = cast(BenchmarkDesignFile, design.spec)
    if not spec.benchmark.validation:
        return ""
    table = agreement_table(reply_scores(store, design, graded), resamples, design.seed)
    shown = pd.DataFrame(
        [
            {
                "judge": r.judge,
                "candidate grader": r.candidate,
                "replies": r.replies,
                "Spearman ρ per reply": md.interval(r.rho, r.rho_low, r.rho_high, 2),
                "chatbots": r.chatbots,
                "Kendall τ of rankings": md.interval(r.tau, r.tau_low, r.tau_high, 2),
            }
            for r in table.itertuples()
        ]
    )
    columns: dict[str, Any] = {c: (lambda row, c=c: str(row[c])) for c in shown.columns}
    return "## Grader validation (reference: each reply's own criteria, same judge)\n\n" + md.table(
        shown, columns
    )
