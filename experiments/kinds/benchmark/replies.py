"""The benchmark's conversation phase: every chatbot answers every sampled conversation once (the
chatbots at once, experiments/engine/chatbot_turns.py), its messages sent verbatim (system
messages included, nothing added), through the store's cached-call door. A refusal or an empty
reply is stored as returned and flagged; a transport failure raises in the served door and
nothing is stored, so the next run asks again."""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

from diarylab.chatbots.base import Chatbot
from diarylab.experiments.engine.chatbot_turns import ask_chatbot, ask_chatbots
from diarylab.experiments.engine.store import Store
from diarylab.experiments.engine.tasks import Tick
from diarylab.experiments.kinds.benchmark.data import Conversation, leaks
from diarylab.experiments.kinds.benchmark.rows import BenchReplyRow


@dataclass(frozen=True)
class Cell:
    id: str  # the reply id: "<conversation id>.<chatbot>"
    conversation: str
    chatbot: str


def expand(conversations: Sequence[Conversation], chatbots: Sequence[str]) -> list[Cell]:
    return [Cell(f"{c.id}.{bot}", c.id, bot) for c in conversations for bot in chatbots]


def derived_seed(design_seed: int, *parts: str) -> int:
    """Fixed by the design seed and the call's place in the design, not by run order."""
    digest = hashlib.sha256(":".join([str(design_seed), *parts]).encode()).digest()
    return int.from_bytes(digest[:4], "big")


def check_no_canary(request: Any, canaries: frozenset[str], where: str) -> None:
    if leaks(request, canaries):
        raise RuntimeError(f"a canary string was about to reach a model ({where})")


def write_replies(
    store: Store,
    chatbots: Mapping[str, Chatbot],
    cells: Sequence[Cell],
    conversations: Mapping[str, Conversation],
    seed: int,
    canaries: frozenset[str],
    tick: Tick,
) -> None:
    by_bot: dict[str, list[Cell]] = defaultdict(list)
    for cell in cells:
        if store.has(BenchReplyRow, cell.id):
            store.kept += 1
            tick(1)
        else:
            by_bot[cell.chatbot].append(cell)
    asks = [
        (bot, partial(_ask, store, bot, todo, conversations, seed, canaries, tick))
        for bot, todo in ((chatbots[b], todo) for b, todo in by_bot.items())
    ]
    ask_chatbots(store, asks)


def _ask(
    store: Store,
    bot: Chatbot,
    todo: list[Cell],
    conversations: Mapping[str, Conversation],
    seed: int,
    canaries: frozenset[str],
    tick: Tick,
) -> None:
    views = [conversations[c.conversation].chat() for c in todo]
    for view in views:
        check_no_canary(view, canaries, f"chatbot {bot.id}")
    ask_chatbot(
        store,
        bot,
        views,
        [derived_seed(seed, "benchmark-reply", c.id) for c in todo],
        lambda i, text, flag, key: _row(todo[i], conversations, text, flag, key),
        tick,
    )


def _row(
    cell: Cell,
    conversations: Mapping[str, Conversation],
    text: str,
    flag: str | None,
    key: str | None,
) -> BenchReplyRow:
    stratum = conversations[cell.conversation].stratum
    return BenchReplyRow(cell.id, cell.conversation, cell.chatbot, stratum, text, flag, key)
