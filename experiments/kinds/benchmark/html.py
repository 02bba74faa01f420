"""What the benchmark report's page shows (experiments/analysis/html_page.py draws it): one group
per sampled conversation × chatbot, the conversation above the chatbot's reply, and on the reply
every criterion with each judge's P(met), its coverage, what the grader wrote and the verdict it
wrote. P(met) and its status are the graded table the leaderboard is computed from
(tables.graded_frame); a criterion left ungraded (every written answer malformed) is flagged."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from diarylab.experiments.analysis.html_page import Column, Group, Score, Text, Viewer
from diarylab.experiments.engine.store import Store
from diarylab.experiments.kinds.benchmark.data import Conversation
from diarylab.experiments.kinds.benchmark.scoring import STATUS
from diarylab.experiments.kinds.benchmark.tables import judgments


def _written(store: Store) -> dict[tuple[str, str, str], str]:
    """(judge, reply id, item) -> the grader's last written answer and the verdict it wrote."""
    out = {}
    for judge, reply, item, text, met, status in store.select(
        "grader_answers",
        ("judge", "reply_id", "item", "text", "written_met", "status"),
        order_by=("attempt",),
    ):
        verdict = "malformed" if status != "ok" else f"wrote criteria_met = {bool(met)}"
        out[(str(judge), str(reply), str(item))] = f"{verdict}: {text}"
    return out


def _conversation_text(conversation: Conversation) -> str:
    return "\n\n".join(f"[{role}] {content}" for role, content in conversation.messages)


def viewer(
    store: Store, conversations: Sequence[Conversation], graded: pd.DataFrame, title: str
) -> Viewer:
    by_id = {c.id: c for c in conversations}
    criteria = {cr.id: cr for c in conversations for cr in c.criteria}
    read = judgments(store, "criterion:")
    written = _written(store)
    reply_ids = {
        (str(c), str(b)): str(r)
        for r, c, b in store.select("bench_replies", ("reply_id", "conversation_id", "chatbot"))
    }
    scores: dict[tuple[str, str], list[Score]] = {}
    flags: dict[tuple[str, str], list[str]] = {}
    for judge, chatbot, conv, crit, p, status in zip(
        *(graded[c] for c in ("judge", "chatbot", "conversation", "criterion", "p_met", STATUS)),
        strict=True,
    ):
        cr = criteria[str(crit)]
        item = f"criterion:{cr.id}"
        reply_key = (str(conv), str(chatbot))
        reply_id = reply_ids.get(reply_key, "")
        found = read.get((str(judge), reply_id, item))
        scores.setdefault(reply_key, []).append(
            Score(
                judge=str(judge),
                item=f"{cr.text} ({cr.points:+g} points, {cr.axis})",
                value=None if p != p else float(p),
                coverage=None if found is None else found[1],
                readable=status == "read",
                answer=written.get((str(judge), reply_id, item)),
                scale="probability",
            )
        )
        if status != "read":
            flags.setdefault(reply_key, []).append(f"{status}: {judge} {cr.id}")
    texts: dict[str, Text] = {}
    groups = []
    for reply_id, conv_id, chatbot, stratum, text, flag in store.select(
        "bench_replies",
        ("reply_id", "conversation_id", "chatbot", "stratum", "text", "flag"),
        order_by=("conversation_id", "chatbot"),
    ):
        conversation = by_id.get(conv_id)
        if conversation is None:
            continue  # a reply to a conversation the design no longer samples
        lead = f"conversation:{conv_id}"
        texts[lead] = Text(
            lead, "conversation", f"conversation ({stratum})", _conversation_text(conversation)
        )
        key = (str(conv_id), str(chatbot))
        texts[reply_id] = Text(
            reply_id,
            "reply",
            f"{chatbot}'s reply",
            text,
            tuple(scores.get(key, ())),
            tuple(([flag] if flag else []) + flags.get(key, [])),
        )
        groups.append(
            Group(
                id=reply_id,
                title=f"{conv_id} · {stratum} · {chatbot}",
                facets={"chatbot": chatbot, "stratum": stratum, "conversation": conv_id},
                columns=(Column(chatbot, {"1": (reply_id,)}),),
                lead=(lead,),
            )
        )
    return Viewer(
        title=title,
        facets=(
            ("chatbot", "chatbot"),
            ("stratum", "acuity / theme"),
            ("conversation", "conversation"),
        ),
        groups=tuple(groups),
        texts=texts,
        step_label="reply",
    )
