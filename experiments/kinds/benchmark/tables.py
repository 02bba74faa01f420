"""From a benchmark run's store to the tables the report reads: one row per judge × reply ×
criterion with P(met) (NaN when ungraded or unreadable), the replies' flags, and what grading
left ungraded or unreadable."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

import pandas as pd

from diarylab.experiments.engine.store import Store
from diarylab.experiments.kinds.benchmark.data import Conversation
from diarylab.experiments.kinds.benchmark.scoring import (
    EXAMPLE_TAGS,
    GRADED_COLUMNS,
    STATUS,
    TAGS,
    UNGRADED,
)


def judgments(store: Store, prefix: str) -> dict[tuple[str, str, str], tuple[float, float]]:
    """(judge, reply id, item) -> (value or NaN when unreadable, coverage), items with prefix."""
    rows = store.select(
        "judgments",
        ("judge", "target_id", "item", "value", "coverage", "readable"),
        where={"target_kind": "reply"},
        like={"item": f"{prefix}%"},
    )
    return {
        (j, t, item): (float(v) if r and v is not None else math.nan, float(c))
        for j, t, item, v, c, r in rows
    }


def graded_frame(
    store: Store, conversations: Sequence[Conversation], judges: Sequence[str]
) -> pd.DataFrame:
    by_id = {c.id: c for c in conversations}
    read = judgments(store, "criterion:")
    rows = []
    for reply_id, conv_id, chatbot in store.select(
        "bench_replies", ("reply_id", "conversation_id", "chatbot"), order_by=("reply_id",)
    ):
        conversation = by_id.get(conv_id)
        if conversation is None:
            continue
        example_tags = "|".join(conversation.tags)
        for judge in judges:
            for cr in conversation.criteria:
                found = read.get((judge, reply_id, f"criterion:{cr.id}"))
                p = found[0] if found else math.nan
                status = UNGRADED if found is None else "read" if p == p else "unreadable"
                rows.append(
                    (judge, chatbot, conv_id, conversation.stratum, cr.id, cr.axis, cr.points, p)
                    + (status, "|".join(cr.tags), example_tags)
                )
    return pd.DataFrame(rows, columns=[*GRADED_COLUMNS, STATUS, TAGS, EXAMPLE_TAGS])


def flags(store: Store) -> pd.DataFrame:
    """chatbot × flag counts of the stored replies (refusals and empty replies graded as
    returned)."""
    counted = Counter(
        (chatbot, flag or "none")
        for chatbot, flag in store.select("bench_replies", ("chatbot", "flag"))
    )
    rows = [(chatbot, flag, n) for (chatbot, flag), n in sorted(counted.items())]
    frame = pd.DataFrame(rows, columns=["chatbot", "flag", "replies"])
    if frame.empty:
        return frame
    return frame.pivot(index="chatbot", columns="flag", values="replies").fillna(0).astype(int)


def grading_counts(store: Store, judges: Sequence[str], criteria_per_judge: int) -> pd.DataFrame:
    """Per judge: criteria asked, read, unreadable (coverage under the floor), ungraded
    (every written answer malformed), attempts that were malformed, mean coverage."""
    out = []
    for judge in judges:
        asked = store.select(
            "judgments",
            ("readable", "coverage"),
            where={"judge": judge},
            like={"item": "criterion:%"},
        )
        coverage = sum(c for _, c in asked) / len(asked) if asked else None
        read = sum(1 for r, _ in asked if r)
        unreadable = len(asked) - read
        malformed = store.count(
            "grader_answers",
            where={"judge": judge, "status": "malformed"},
            like={"item": "criterion:%"},
        )
        out.append(
            (
                judge,
                criteria_per_judge,
                read,
                unreadable,
                criteria_per_judge - read - unreadable,
                int(malformed),
                float(coverage) if coverage is not None else math.nan,
            )
        )
    columns = ["judge", "criteria", "read", "unreadable", "ungraded", "malformed answers"]
    return pd.DataFrame(out, columns=[*columns, "mean coverage"])
