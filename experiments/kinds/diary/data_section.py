"""The diary report's Data section: what the run holds and what it lost — counts of entries,
replies and judgments (readable or not), texts the token cap cut, and per arm (profile ×
chatbot) the entries expected against those written and readable, so a reader sees where cells
went missing before reading any estimate."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from diarylab.experiments.analysis import markdown as md
from diarylab.experiments.kinds.diary.frames import (
    SHARED,
    AnalysisTables,
    collapse_first_entries,
    usable,
)
from diarylab.experiments.kinds.diary.schema import PROJECTION


def arm_counts(tables: AnalysisTables, entries_per_conversation: int) -> pd.DataFrame:
    """Per judge × profile × chatbot: the entries a complete run has (diarists × its entries;
    the shared first entry once, under "(shared)"), those written, and those with every score
    readable under that judge."""
    e = collapse_first_entries(tables.entries)
    diarists = tables.entries["diarist"].nunique()
    readable = usable(e, "mean")
    rows = []
    for (judge, profile, chatbot), group in e.groupby(["judge", "profile", "chatbot"]):
        per = 1 if chatbot == SHARED else max(entries_per_conversation - 1, 0)
        ok = readable[
            (readable["judge"] == judge)
            & (readable["profile"] == profile)
            & (readable["chatbot"] == chatbot)
        ]
        unreadable = set(group["entry_id"]) - set(ok["entry_id"])
        written = group["entry_id"].nunique()
        rows.append(
            {"judge": judge, "profile": profile, "chatbot": chatbot}
            | {"expected": diarists * per, "written": written}
            | {"readable": written - len(unreadable)}
        )
    return pd.DataFrame(
        rows, columns=["judge", "profile", "chatbot", "expected", "written", "readable"]
    )


def arm_table(tables: AnalysisTables, design: Mapping[str, Any]) -> str:
    """The per-arm table, judges' rows only (the projection reads every written entry)."""
    if tables.entries.empty:
        return ""
    per = int(design.get("design", {}).get("entries", 0) or tables.entries["entry_index"].max())
    counts = arm_counts(tables, per)
    counts = counts[counts["judge"] != PROJECTION]
    lost = counts[counts["readable"] < counts["expected"]]
    note = (
        f"{len(lost)} of {len(counts)} arms lost entries (unwritten or with an unreadable score)."
        if len(lost)
        else "No arm lost an entry."
    )
    return (
        "\n### Entries per arm: expected, written, readable\n\n"
        + note
        + "\n\n"
        + md.table(
            counts,
            {"judge": "judge", "profile": "profile", "chatbot": "chatbot"}
            | {"expected": "expected", "written": "written", "readable": "readable"},
        )
    )


def fixed_chatbots(design: Mapping[str, Any]) -> set[str]:
    """The design's fixed-reply chatbots: their replies are not model-written (no token cap)."""
    return {str(c.get("id")) for c in design.get("chatbots", []) if c.get("kind") == "fixed"}


def ended_at_sentence(design: Mapping[str, Any]) -> bool:
    """Whether the diarist and every model-written chatbot end a cut text at a sentence."""
    tables = [design.get("diarist_model", {})] + [
        c for c in design.get("chatbots", []) if c.get("kind") != "fixed"
    ]
    return all(t.get("generation", {}).get("end_at_sentence", False) for t in tables)


def cut_texts(tables: AnalysisTables, fixed: set[str]) -> tuple[tuple[int, int], ...]:
    """(cut, all) for the entries and for the model-written replies (not a fixed chatbot's)."""
    f = tables.flags
    cut = set(f.loc[f["kind"] == "truncated", "where"].astype(str))
    entries = set(tables.entries["entry_id"].astype(str))
    r = tables.replies
    written = set(r.loc[~r["chatbot"].isin(fixed), "reply_id"].astype(str))
    return (len(cut & entries), len(entries)), (len(cut & written), len(written))


def data_counts(
    tables: AnalysisTables, readings: pd.DataFrame | None, fixed: set[str]
) -> dict[str, Any]:
    """The Data section's counts, each labelled with what it counts: judges' entry scores,
    the judge-free projection (no judge reading), the judges' yes/no questions asked of entries
    alone (from the judge readings: the analysis tables keep them only as weights), replies'
    rubric answers, and the model-written texts the token cap cut."""
    e, r, f = tables.entries, tables.replies, tables.flags
    judged = e.drop_duplicates(["entry_id", "judge", "score"])
    by_judge = judged[judged["judge"] != PROJECTION]
    projected = judged[judged["judge"] == PROJECTION]
    counts: dict[str, Any] = {
        "diarists": e["diarist"].nunique(),
        "entries": e["entry_id"].nunique(),
        "entry scores (judges)": len(by_judge),
        "unreadable entry scores": int((~by_judge["readable"].astype(bool)).sum()),
    }
    if len(projected):
        counts["entry projections (judge-free measure, no judge reading)"] = len(projected)
    if readings is not None and len(readings):
        # The readings hold every judge judgment of an entry (scores and questions alike, the
        # projection left out): what is not a score is a question asked of the entry alone.
        read = readings[readings["reading"].str.startswith("entry ")]
        unread = int(read["unreadable"].sum()) - counts["unreadable entry scores"]
        counts["entry yes/no questions (judges, asked of the entry alone)"] = int(
            read["n"].sum()
        ) - len(by_judge)
        counts["unreadable entry yes/no questions"] = unread
    counts |= {
        "replies": r["reply_id"].nunique(),
        "reply judgments (judges, rubric yes/no)": len(r),
        "unreadable reply judgments": int((~r["readable"].astype(bool)).sum()),
    }
    (cut_e, entries), (cut_r, written) = cut_texts(tables, fixed)
    counts["entries cut at the token cap"] = f"{cut_e} of {entries}"
    counts["model-written replies cut at the token cap"] = f"{cut_r} of {written}"
    others = f[f["kind"] != "truncated"]["kind"].value_counts().sort_index()
    counts |= {f"flags: {k}": int(n) for k, n in others.items()}
    return counts


def data_section(
    tables: AnalysisTables,
    readings: pd.DataFrame | None = None,
    design: Mapping[str, Any] | None = None,
) -> str:
    design = design or {}
    counts = data_counts(tables, readings, fixed_chatbots(design))
    notes = []
    scores = counts["entry scores (judges)"]
    asked = counts.get("entry yes/no questions (judges, asked of the entry alone)")
    if asked is not None:
        notes.append(
            f"The judge readings below count every judge reading of an entry: its scores "
            f"({scores}) and its yes/no questions ({asked}), {scores + asked} in all; the "
            "projection is no judge's reading and is not among them."
        )
    (cut, total), (cut_r, total_r) = cut_texts(tables, fixed_chatbots(design))
    if total + total_r and (cut + cut_r) * 2 > total + total_r:
        cap = design.get("diarist_model", {}).get("generation", {}).get("max_new_tokens")
        at = f" (now {cap} for entries)" if cap is not None else ""
        how = (
            "each is used up to its last full sentence (`end_at_sentence`), and the judges "
            "read it so; the words after it are kept in the store's call records"
            if ended_at_sentence(design)
            else "they end where the cap stopped them, mid-sentence, and the judges read them so"
        )
        notes.append(
            f"**{cut + cut_r} of {total + total_r} model-written texts reached the token "
            f"cap**: {how}. Raise `generation.max_new_tokens` in `[diarist_model]`{at} and in "
            "each model chatbot's `[[chatbots]]` table to let the writers end them."
        )
    return (
        "## Data\n\n"
        + md.key_values(counts)
        + "".join(f"\n{n}\n" for n in notes)
        + arm_table(tables, design)
    )
