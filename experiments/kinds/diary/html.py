"""What the diary report's page shows (experiments/analysis/html_page.py draws it): one group per
diarist × profile × chatbot, its conversation beside the same diarist's unsteered twin with that
chatbot and beside the same profile with the fixed-reply baseline, entries and replies step by
step, each with every judge's reading (value, coverage, certified bound) and its flags. Made from
the analysis tables the findings are computed from, and the row map of sources.csv."""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from diarylab.experiments.analysis.html_page import (
    Column,
    Group,
    Score,
    Text,
    Viewer,
    flags_by_target,
    readings_of,
    rows_from_sources,
)
from diarylab.experiments.kinds.diary.frames import UNSTEERED, AnalysisTables

Bounds = Mapping[tuple[str, str, str], tuple[float, float]]
Conversation = tuple[str, str, str]  # diarist, profile, chatbot


def _texts(tables: AnalysisTables, bounds: Bounds) -> dict[str, Text]:
    e, r = tables.entries, tables.replies
    entry_scores = readings_of(e, "entry_id", "mean", "score", bounds)
    reply_scores = readings_of(r, "reply_id", "p_yes", "question", bounds, scale="probability")
    entries = e.drop_duplicates("entry_id")
    replies = r.drop_duplicates("reply_id")
    ids = [*entries["entry_id"].astype(str), *replies["reply_id"].astype(str)]
    flags = flags_by_target(tables.flags, ids)

    def text(tid: str, kind: str, label: str, body: object, scores: dict[str, list[Score]]) -> Text:
        return Text(
            tid, kind, label, str(body), tuple(scores.get(tid, ())), tuple(flags.get(tid, ()))
        )

    out = {
        str(row.entry_id): text(
            str(row.entry_id), "entry", f"entry {row.entry_index}", row.text, entry_scores
        )
        for row in entries.itertuples(index=False)
    }
    for row in replies.itertuples(index=False):
        label = f"{row.chatbot}'s reply to entry {row.entry_index}"
        out[str(row.reply_id)] = text(str(row.reply_id), "reply", label, row.text, reply_scores)
    return out


def _steps(tables: AnalysisTables) -> dict[Conversation, dict[str, list[str]]]:
    """Each conversation's texts by entry number: entry k, then the reply to it."""
    found: dict[Conversation, dict[str, list[str]]] = {}
    for frame, key in ((tables.entries, "entry_id"), (tables.replies, "reply_id")):
        rows = frame[["diarist", "profile", "chatbot", "entry_index", key]].drop_duplicates()
        for d, p, c, k, tid in rows.itertuples(index=False):
            steps = found.setdefault((str(d), str(p), str(c)), {})
            ids = steps.setdefault(str(int(k)), [])
            if str(tid) not in ids:
                ids.append(str(tid))
    return found


def viewer(
    tables: AnalysisTables,
    sources: pd.DataFrame,
    baseline: str | None,
    title: str,
    bounds: Bounds | None = None,
) -> Viewer:
    """The diary page's data: every conversation with its twin and its baseline beside it."""
    steps = _steps(tables)

    def column(conv: Conversation, label: str) -> Column | None:
        found = steps.get(conv)
        return None if found is None else Column(label, {k: tuple(v) for k, v in found.items()})

    groups = []
    order = sorted(steps, key=lambda c: (c[0], c[1] != UNSTEERED, c[1], c[2] != baseline, c[2]))
    for diarist, profile, chatbot in order:
        beside = [column((diarist, profile, chatbot), f"{profile} with {chatbot}")]
        if profile != UNSTEERED:
            beside.append(column((diarist, UNSTEERED, chatbot), f"unsteered twin with {chatbot}"))
        if baseline is not None and chatbot != baseline:
            beside.append(
                column((diarist, profile, baseline), f"{profile} with {baseline} (baseline)")
            )
        groups.append(
            Group(
                id=f"{diarist}.{profile}.{chatbot}",
                title=f"{diarist} · {profile} · {chatbot}",
                facets={"diarist": diarist, "profile": profile, "chatbot": chatbot},
                columns=tuple(c for c in beside if c is not None),
            )
        )
    return Viewer(
        title=title,
        facets=(
            ("diarist", "diarist"),
            ("profile", "profile"),
            ("chatbot", "chatbot"),
            ("entry", "entry"),
        ),
        groups=tuple(groups),
        texts=_texts(tables, bounds or {}),
        rows=rows_from_sources(sources),
        step_facet="entry",
        step_label="entry",
    )
