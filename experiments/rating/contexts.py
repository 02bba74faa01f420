"""What a rater reads for each item: an entry alone (the judges score entries alone), or a
reply with the entry it answers and the conversation's earlier entries and replies (what the
judges see above a rubric question). Texts only: no ids, names or flags."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from diarylab.experiments.rating.sample import SampleItem


@dataclass(frozen=True)
class ItemContext:
    item_id: str
    target: str  # "entry" or "reply"
    earlier: tuple[tuple[str, str], ...]  # ("entry" | "reply", text), oldest first
    entry: str
    reply: str | None

    def to_record(self) -> dict[str, object]:
        return {
            "id": self.item_id,
            "kind": self.target,
            "earlier": [list(pair) for pair in self.earlier],
            "entry": self.entry,
            "reply": self.reply,
        }


def _conversation(texts: pd.DataFrame, item: SampleItem) -> tuple[dict[int, str], dict[int, str]]:
    """Entries and replies of the item's conversation by entry index. The first entry is
    shared by every chatbot of a diarist × profile (stored without a chatbot)."""
    mine = texts[(texts["diarist"] == item.diarist) & (texts["profile"] == item.profile)]
    same_chatbot = mine["chatbot"] == item.chatbot
    entries = mine[(mine["table"] == "entries") & (same_chatbot | mine["chatbot"].isna())]
    replies = mine[(mine["table"] == "replies") & same_chatbot]
    return (
        {int(e): str(t) for e, t in zip(entries["entry"], entries["text"], strict=False)},
        {int(e): str(t) for e, t in zip(replies["entry"], replies["text"], strict=False)},
    )


def item_contexts(texts: pd.DataFrame, items: Sequence[SampleItem]) -> dict[str, ItemContext]:
    table = {"entry": "entries", "reply": "replies"}
    by_id = texts.set_index(["table", "text_id"])["text"]
    out: dict[str, ItemContext] = {}
    for item in items:
        if item.target_kind == "entry":
            text = str(by_id[(table["entry"], item.target_id)])
            out[item.item_id] = ItemContext(item.item_id, "entry", (), text, None)
            continue
        entries, replies = _conversation(texts, item)
        earlier: list[tuple[str, str]] = []
        for k in range(1, item.entry):
            if k in entries:
                earlier.append(("entry", entries[k]))
            if k in replies:
                earlier.append(("reply", replies[k]))
        reply = str(by_id[(table["reply"], item.target_id)])
        out[item.item_id] = ItemContext(
            item.item_id, "reply", tuple(earlier), entries.get(item.entry, ""), reply
        )
    return out
