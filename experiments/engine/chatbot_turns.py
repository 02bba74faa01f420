"""One way a kind asks a chatbot for replies (a diary cell's next reply, a benchmark answer):
through the store's cached-call door, keyed by the chatbot's identity and its own request for
each conversation and seed, with the reply's refusal flag stored as the chatbot returned it.
The chatbots of one turn answer at once (`ask_chatbots`): a served one in a lane of its own,
the in-process ones one after another (experiments/engine/lanes.py)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from diarylab.chatbots.base import Chatbot, Message
from diarylab.chatbots.local import LocalChatbot
from diarylab.experiments.engine.lanes import lane_key, lanes_of, run_lanes
from diarylab.experiments.engine.store import Store
from diarylab.experiments.engine.tasks import Tick

# The kind's row for reply i: its text, its flag, and the key of the call that made it (None
# for a chatbot that calls no model).
ReplyRowFor = Callable[[int, str, str | None, str | None], Any]


def ask_chatbot(
    store: Store,
    bot: Chatbot,
    views: Sequence[Sequence[Message]],
    seeds: Sequence[int],
    row: ReplyRowFor,
    tick: Tick,
) -> None:
    """`bot`'s reply to each of `views` (with the matching seed), stored as `row(i, ...)`: a
    reply already in the store is read back, not asked again."""
    if len(views) != len(seeds):
        raise ValueError(f"{len(seeds)} seeds for {len(views)} conversations")
    if not bot.calls_model:
        # A fixed reply has nothing worth caching: its rows are written straight away.
        answers = bot.reply_many(views, seeds)
        store.put_rows(*(row(i, a.text, a.flag, None) for i, a in enumerate(answers)))
        tick(len(views))
        return

    def reply(indices: list[int]) -> list[dict[str, Any]]:
        answers = bot.reply_many([views[i] for i in indices], [seeds[i] for i in indices])
        return [{**a.record, "text": a.text, "flag": a.flag} for a in answers]

    store.cached_calls(
        "chatbot",
        bot.id,
        bot.identity(),
        [bot.request(view, seed) for view, seed in zip(views, seeds, strict=True)],
        reply,
        rows=lambda i, result, key: (row(i, result["text"], result["flag"], key),),
        batch_size=bot.batch_size,
        done=tick,
    )


def ask_chatbots(store: Store, asks: Sequence[tuple[Chatbot, Callable[[], None]]]) -> None:
    """Each (chatbot, its ask_chatbot call) of one turn, side by side."""
    keys = [lane_key(isinstance(bot, LocalChatbot), bot.identity()) for bot, _ in asks]
    run_lanes(store, lanes_of([(key, job) for key, (_, job) in zip(keys, asks, strict=True)]))
