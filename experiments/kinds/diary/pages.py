"""One Markdown page per diarist: every entry and reply they were part of, in conversation
order, with each judge's scores beside it and the store ids to find it again."""

from __future__ import annotations

import pandas as pd

from diarylab.experiments.analysis import markdown as md
from diarylab.experiments.kinds.diary.frames import UNSTEERED, ordered
from diarylab.experiments.kinds.diary.schema import PROJECTION


def _score_table(rows: pd.DataFrame, column: str, key: str) -> str:
    """Judges as columns, score kinds (or questions) as rows; unreadable shown as such."""
    if rows.empty:
        return "_no judgments_\n"
    # Plain dicts, not pivot_table: a report renders hundreds of these small tables.
    digits = 2 if column == "p_yes" else 1
    shown: dict[tuple[str, str], str] = {}
    for item, judge, value, ok in zip(
        rows[key], rows["judge"], rows[column], rows["readable"].astype(bool), strict=True
    ):
        # the projection is in residual-norm units (about 0.1): three decimals, not one
        places = 3 if judge == PROJECTION else digits
        shown.setdefault((str(item), str(judge)), md.number(value, places) if ok else "unreadable")
    items = sorted({i for i, _ in shown})
    judges = sorted({j for _, j in shown})
    lines = [f"| {key} | " + " | ".join(judges) + " |", "|" + "---|" * (len(judges) + 1)]
    for item in items:
        values = " | ".join(md.cell(shown.get((item, j), md.MISSING)) for j in judges)
        lines.append(f"| {md.cell(item)} | {values} |")
    return "\n".join(lines) + "\n"


def text_notes(flags: pd.DataFrame) -> dict[str, str]:
    """Text id -> what its flags say about the text (shown beside it): "cut at the token cap
    (110 tokens): …", a refusal, an empty text."""
    notes: dict[str, list[str]] = {}
    for kind, where, detail in zip(flags["kind"], flags["where"], flags["detail"], strict=True):
        if kind == "unreadable":
            continue  # a judgment's flag, shown in its score table as "unreadable"
        text = str(detail) if kind == "truncated" else f"{kind} ({detail})"
        notes.setdefault(str(where), []).append(text)
    return {where: "; ".join(texts) for where, texts in notes.items()}


def _note(notes: dict[str, str], ident: str) -> list[str]:
    return [f"_Flagged: {notes[ident]}._\n"] if ident in notes else []


def _entry(rows: pd.DataFrame, k: int, shared: bool, notes: dict[str, str]) -> list[str]:
    first = rows.iloc[0]
    where = "shared by every chatbot" if shared else f"cell `{first['cell_id']}`"
    return [
        f"#### Entry {k} — `{first['entry_id']}` ({where})\n",
        md.quote(first["text"]),
        *_note(notes, str(first["entry_id"])),
        _score_table(rows.drop_duplicates(["judge", "score"]), "mean", "score"),
    ]


def _reply(rows: pd.DataFrame, k: int, notes: dict[str, str]) -> list[str]:
    first = rows.iloc[0]
    labelled = rows.assign(item=rows["behavior"] + " / " + rows["question"])
    return [
        f"#### Reply to entry {k} — `{first['reply_id']}`\n",
        md.quote(first["text"]),
        *_note(notes, str(first["reply_id"])),
        "P(yes) per rubric question:\n",
        _score_table(labelled, "p_yes", "item"),
    ]


def diarist_page(
    diarist: str,
    entries: pd.DataFrame,
    replies: pd.DataFrame,
    flags: pd.DataFrame,
    baseline: str | None = None,
) -> str:
    mine_e = entries[entries["diarist"] == diarist]
    mine_r = replies[replies["diarist"] == diarist]
    out = [f"# Diarist `{diarist}`\n", "[back to the findings](../findings.md)\n"]
    notes = text_notes(flags)
    for profile in ordered(pd.concat([mine_e["profile"], mine_r["profile"]]), first=UNSTEERED):
        e = mine_e[mine_e["profile"] == profile]
        r = mine_r[mine_r["profile"] == profile]
        out.append(f"## Profile `{profile}`\n")
        first = e[e["entry_index"] == 1]
        shared_ids = set(first["entry_id"])
        if len(shared_ids) == 1:
            out += _entry(first, 1, shared=True, notes=notes)
        chatbots = ordered(pd.concat([e["chatbot"], r["chatbot"]]), first=baseline)
        for chatbot in chatbots:
            out.append(f"### Conversation with `{chatbot}`\n")
            ce, cr = e[e["chatbot"] == chatbot], r[r["chatbot"] == chatbot]
            steps = sorted(set(ce["entry_index"]) | set(cr["entry_index"]))
            for k in steps:
                at = ce[ce["entry_index"] == k]
                if not at.empty and not (k == 1 and len(shared_ids) == 1):
                    out += _entry(at, k, shared=False, notes=notes)
                reply = cr[cr["entry_index"] == k]
                if not reply.empty:
                    out += _reply(reply, k, notes)
    ids = set(mine_e["entry_id"]) | set(mine_r["reply_id"]) | set(mine_e["cell_id"])
    mine_f = flags[flags["where"].astype(str).isin(ids)]
    if not mine_f.empty:
        out.append("## Flags\n")
        out.append(md.table(mine_f, {"kind": "kind", "where": "where", "detail": "detail"}))
    return "\n".join(out)
