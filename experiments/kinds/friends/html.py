"""What the friends report's page shows (experiments/analysis/html_page.py draws it): one group
per letter exchange, the two seats' letters side by side letter by letter, each letter with every
judge's reading (pattern scores, the identity check) and its flags. Letters come from the store
(a fixed letter, which no judge reads, is shown too); the readings are the same table the
findings are computed from (outcomes.letter_table)."""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from diarylab.experiments.analysis.html_page import (
    Column,
    Group,
    Text,
    Viewer,
    readings_of,
    rows_from_sources,
)
from diarylab.experiments.engine.store import Store

Bounds = Mapping[tuple[str, str, str], tuple[float, float]]


def viewer(
    store: Store, letters: pd.DataFrame, sources: pd.DataFrame, title: str, bounds: Bounds
) -> Viewer:
    """letters: outcomes.letter_table (one row per letter × judge × item)."""
    numbers = letters["item"].astype(str).str.startswith("pattern:")
    scores = readings_of(letters[numbers], "letter_id", "value", "item", bounds)
    for tid, found in readings_of(
        letters[~numbers], "letter_id", "value", "item", bounds, scale="probability"
    ).items():
        scores.setdefault(tid, []).extend(found)
    unread = letters.loc[~letters["readable"].astype(bool), ["letter_id", "judge", "item"]]
    unreadable: dict[str, list[str]] = {}
    for lid, judge, item in unread.itertuples(index=False):
        unreadable.setdefault(str(lid), []).append(f"unreadable: {judge} {item}")

    texts: dict[str, Text] = {}
    seats: dict[str, dict[str, dict[str, list[str]]]] = {}  # pair -> seat -> letter -> ids
    writers: dict[str, dict[str, tuple[str, str]]] = {}  # pair -> seat -> (writer, profile)
    conditions: dict[str, str] = {}
    for (
        lid,
        pair,
        condition,
        seat,
        writer,
        friend,
        profile,
        k,
        position,
        text,
        flag,
    ) in store.select(
        "letters",
        (
            "letter_id",
            "pair_id",
            "condition",
            "seat",
            "writer",
            "friend",
            "profile",
            "letter_index",
            "position",
            "text",
            "flag",
        ),
        order_by=("pair_id", "position"),
    ):
        flags = ([flag] if flag else []) + unreadable.get(lid, [])
        label = f"{position}. {writer} ({profile}) to {friend}, letter {k}"
        texts[lid] = Text(
            lid, f"letter-{seat.lower()}", label, text, tuple(scores.get(lid, ())), tuple(flags)
        )
        seats.setdefault(pair, {}).setdefault(seat, {}).setdefault(str(k), []).append(lid)
        writers.setdefault(pair, {})[seat] = (writer, profile)
        conditions[pair] = condition
    groups = []
    for pair, by_seat in seats.items():
        who = writers[pair]
        columns = tuple(
            Column(
                f"seat {s}: {who[s][0]} ({who[s][1]})",
                {k: tuple(ids) for k, ids in by_seat[s].items()},
            )
            for s in sorted(by_seat)
        )
        groups.append(
            Group(
                id=pair,
                title=f"{pair} · {conditions[pair]}",
                facets={
                    "condition": conditions[pair],
                    "writer": tuple(sorted({w for w, _ in who.values()})),
                    "profile": tuple(sorted({p for _, p in who.values()})),
                },
                columns=columns,
            )
        )
    return Viewer(
        title=title,
        facets=(
            ("condition", "condition"),
            ("writer", "writer"),
            ("profile", "profile"),
            ("letter", "letter"),
        ),
        groups=tuple(groups),
        texts=texts,
        rows=rows_from_sources(sources),
        step_facet="letter",
        step_label="letter",
    )
