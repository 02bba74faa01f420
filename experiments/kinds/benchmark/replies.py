"""The benchmark's conversation phase: every chatbot answers every sampled conversation once,
its messages sent verbatim (system messages included, nothing added), through the store's
cached-call door. A refusal or an empty reply is stored as returned and flagged; a transport
failure raises in the served door and nothing is stored, so the next run asks again."""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from chatbots.base import Chatbot
from experiments.engine.store import Store
from experiments.engine.vocabulary import Tick
from experiments.kinds.benchmark.data import Conversation, leaks
from experiments.kinds.benchmark.rows import BenchReplyRow


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
            tick(1)
        else:
            by_bot[cell.chatbot].append(cell)
    for bot_id, todo in by_bot.items():
        bot = chatbots[bot_id]
        views = [conversations[c.conversation].chat() for c in todo]
        for view in views:
            check_no_canary(view, canaries, f"chatbot {bot_id}")
        if not bot.calls_model:
            answers = bot.reply_many(views, [0] * len(views))
            store.put_rows(
                *(
                    _row(c, conversations, a.text, a.flag, None)
                    for c, a in zip(todo, answers, strict=True)
                )
            )
            tick(len(todo))
            continue
        seeds = [derived_seed(seed, "benchmark-reply", c.id) for c in todo]

        def reply(
            indices: list[int],
            bot: Chatbot = bot,
            views: list[Any] = views,
            seeds: list[int] = seeds,
        ) -> list[dict[str, Any]]:
            answers = bot.reply_many([views[i] for i in indices], [seeds[i] for i in indices])
            return [{**a.record, "text": a.text, "flag": a.flag} for a in answers]

        store.cached_calls(
            "chatbot",
            bot.id,
            bot.identity(),
            [bot.request(v, s) for v, s in zip(views, seeds, strict=True)],
            reply,
            rows=lambda i, result, key, todo=todo: (  # type: ignore[misc]
                _row(todo[i], conversations, result["text"], result["flag"], key),
            ),
            batch_size=bot.batch_size,
            done=tick,
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
