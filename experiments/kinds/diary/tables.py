"""From a run's store to the three analysis tables (experiments/kinds/diary/frames.py): one row per
entry × judge × score, per reply × judge × question, and per flag. The shared first entry is
listed under every chatbot's cell (same entry_id), as the analysis contract expects."""

from __future__ import annotations

import math

import pandas as pd

from diarylab.experiments.analysis.readings import stored_readings, summarize
from diarylab.experiments.engine.store import Store
from diarylab.experiments.kinds.diary.frames import (
    ENTRY_COLUMNS,
    FLAG_COLUMNS,
    REPLY_COLUMNS,
    UNSTEERED,
    AnalysisTables,
)
from diarylab.experiments.kinds.diary.schema import DiaryDesignFile
from diarylab.rubric.behavior import condition_weight
from diarylab.rubric.behavior_rubric import load_behavior_rubric


def _value(v: float | None) -> float:
    return math.nan if v is None else float(v)


def flag_detail(flag: str, tokens: int | None, stored: str, ended: bool = False) -> str:
    """What a flag means for the text, as its page shows it beside the text. `ended`: a text
    the cap cut was used up to its last full sentence (GenerationSettings.end_at_sentence)."""
    if flag != "truncated":
        return stored
    cap = f" ({tokens} tokens)" if tokens is not None else ""
    if ended:
        return f"cut at the token cap{cap}: used up to its last full sentence"
    return f"cut at the token cap{cap}: {stored}, ending where the cap stopped it"


def person_answers(store: Store) -> dict[tuple[str, str, str], float | None]:
    """(judge, entry id, person question id) -> P(yes), from questions asked of entries alone."""
    rows = store.select(
        "judgments",
        ("judge", "target_id", "item", "value", "readable"),
        where={"target_kind": "entry"},
        like={"item": "person:%"},
    )
    return {(j, t, item.removeprefix("person:")): (v if r else None) for j, t, item, v, r in rows}


def judge_readings(store: Store) -> pd.DataFrame:
    """The report's judge readings per judge × profile (experiments/analysis/readings.py): an
    entry's and a reply's judgments are shown under the diarist's profile, unsteered first."""
    groups = {
        (kind, target): profile
        for kind, table, key in (("entry", "entries", "entry_id"), ("reply", "replies", "reply_id"))
        for target, profile in store.select(table, (key, "profile"))
    }
    return summarize(stored_readings(store, groups), first=UNSTEERED)


def load_tables(store: Store, spec: DiaryDesignFile) -> AnalysisTables:
    """Every reply judgment, with its weight q for a conditioned question (rubric/behavior_rubric
    .toml applies_when): the same judge's P(yes) to the person question on the replied entry
    (1 − P(yes) for "not X"), by the one rule in rubric/behavior.py. Nothing is cut here; the
    report weights each reply by q, so "misses signs of risk" is a share of replies to entries
    that show risk."""
    chatbots = [c.id for c in spec.chatbots]
    rubric = load_behavior_rubric()
    behavior = {q.id: q.behavior for q in rubric.questions}
    desired = {q.id: q.desired for q in rubric.questions}
    conditions = {q.id: q.condition for q in rubric.questions}
    person = person_answers(store)
    entries = {
        r[0]: r
        for r in store.select(
            "entries",
            ("entry_id", "diarist", "profile", "pattern", "chatbot", "entry_index", "text"),
        )
    }
    replies = {
        r[0]: r
        for r in store.select(
            "replies",
            (
                "reply_id",
                "cell_id",
                "diarist",
                "profile",
                "pattern",
                "chatbot",
                "entry_index",
                "text",
            ),
        )
    }
    reply_entries = dict(store.select("replies", ("reply_id", "entry_id")))
    entry_rows, reply_rows, flags = [], [], []
    judged = ("target_kind", "target_id", "judge", "item", "value", "coverage", "readable")
    for target_kind, target, judge, item, value, coverage, readable, jid in store.select(
        "judgments", (*judged, "judgment_id"), order_by=("judgment_id",)
    ):
        if not readable:
            flags.append(("unreadable", jid, f"coverage {coverage:.3f}"))
        if target_kind == "entry" and not item.startswith("person:"):
            eid, diarist, profile, pattern, chatbot, k, text = entries[target]
            for bot in [chatbot] if chatbot else chatbots:
                entry_rows.append(
                    (
                        f"{diarist}.{profile}.{bot}",
                        diarist,
                        profile,
                        pattern,
                        bot,
                        k,
                        judge,
                        item,
                        _value(value),
                        coverage,
                        bool(readable),
                        eid,
                        text,
                    )
                )
        elif target_kind == "reply":
            rid, cell, diarist, profile, pattern, bot, k, text = replies[target]
            condition = conditions.get(item)
            answer = person.get((judge, reply_entries[rid], condition[0])) if condition else None
            weight = condition_weight(condition, answer)
            reply_rows.append(
                (
                    cell,
                    diarist,
                    profile,
                    pattern,
                    bot,
                    k,
                    judge,
                    item,
                    behavior.get(item, "unknown"),
                    desired.get(item),
                    _value(value),
                    _value(weight),
                    coverage,
                    bool(readable),
                    rid,
                    text,
                )
            )
    ended = {c.id: c.ends_at_sentence() for c in spec.chatbots}
    for rid, flag, bot, _, tokens in store.with_call_fields(
        "replies",
        ("reply_id", "flag", "chatbot"),
        [("$.new_tokens", "$.usage.completion_tokens")],
        not_null=("flag",),
    ):
        detail = flag_detail(flag, tokens, "reply stored as returned", ended.get(bot, False))
        flags.append((flag, rid, detail))
    diarist = spec.diarist_model
    entries_ended = diarist.generation.end_at_sentence if diarist is not None else False
    for eid, flag, tokens in store.select(
        "entries", ("entry_id", "flag", "new_tokens"), not_null=("flag",)
    ):
        flags.append(
            (flag, eid, flag_detail(flag, tokens, "entry stored as written", entries_ended))
        )
    return AnalysisTables(
        pd.DataFrame(entry_rows, columns=list(ENTRY_COLUMNS)),
        pd.DataFrame(reply_rows, columns=list(REPLY_COLUMNS)),
        pd.DataFrame(flags, columns=list(FLAG_COLUMNS)),
    )
