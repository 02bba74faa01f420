"""The diary experiment's conversation phase: the four-entry loop. Entry k of every cell is
written (batched, steered and unsteered rows together), then every chatbot answers it (the
chatbots at once, experiments/engine/chatbot_turns.py); entry 1
of a diarist × profile is written once and shared by all chatbots. Every call goes through the
store's cached-call door: its result is stored, with the row made from it, before anything
reads it, and a call already in the store is not made again."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from functools import partial
from typing import Any

from diarylab.chatbots.base import Chatbot
from diarylab.diarists.entry_context import chatbot_view, entry_messages
from diarylab.diarists.templates import EntryTemplate
from diarylab.experiments.engine.chatbot_turns import ask_chatbot, ask_chatbots
from diarylab.experiments.engine.store import Store
from diarylab.experiments.engine.tasks import Tick
from diarylab.experiments.engine.writes import SteeredWrite, Writer, write_cached
from diarylab.experiments.kinds.diary.cells import Cell, derived_seed
from diarylab.experiments.kinds.diary.rows import EntryRow, ReplyRow, history

# The diary's writer: the diarist model with the entry template.
DiaryWriter = Writer[EntryTemplate]


def write_entries(
    store: Store, writer: DiaryWriter, cells: Sequence[Cell], k: int, seed: int, tick: Tick
) -> None:
    jobs: dict[str, tuple[Cell, list[dict[str, str]], int]] = {}
    kept: set[str] = set()
    for cell in cells:
        eid = cell.entry_id(k)
        if eid in jobs or eid in kept:
            continue  # entry 1 is shared by every chatbot: one step
        if store.has(EntryRow, eid):
            kept.add(eid)  # a resumed run's finished entry: read from the store
            store.kept += 1
            tick(1)
            continue
        earlier, replies = history(store, cell, k - 1, k - 1)
        messages = entry_messages(writer.cards[cell.diarist], writer.template, earlier, replies)
        jobs[eid] = (cell, messages, derived_seed(seed, "entry", cell.twin_place("e", k)))
    order = list(jobs.values())
    write_cached(
        store,
        writer,
        [SteeredWrite(messages, entry_seed, cell.profile) for cell, messages, entry_seed in order],
        lambda i, result, key: (entry_row(order[i][0], k, writer, result, key),),
        done=tick,
    )


def entry_row(
    cell: Cell, k: int, writer: DiaryWriter, result: Mapping[str, Any], key: str
) -> EntryRow:
    cut = not result.get("stopped_at_eos", True)
    text = writer.generation.ended(str(result["text"]).strip(), cut)
    return EntryRow(
        entry_id=cell.entry_id(k),
        diarist=cell.diarist,
        profile=cell.profile,
        pattern=writer.profiles[cell.profile].pattern,
        chatbot=None if k == 1 else cell.chatbot,
        entry_index=k,
        text=text,
        new_tokens=result.get("new_tokens"),
        flag=_entry_flag(text, result),
        call_key=key,
    )


def _entry_flag(text: str, result: Mapping[str, Any]) -> str | None:
    """Stored as written, flagged: an empty entry, or one the token cap cut off."""
    if not text:
        return "empty"
    return None if result.get("stopped_at_eos", True) else "truncated"


def write_replies(
    store: Store,
    writer: DiaryWriter,
    chatbots: Mapping[str, Chatbot],
    cells: Sequence[Cell],
    k: int,
    seed: int,
    tick: Tick,
) -> None:
    by_chatbot: dict[str, list[tuple[Cell, list[dict[str, str]]]]] = defaultdict(list)
    for cell in cells:
        if store.has(ReplyRow, cell.reply_id(k)):
            store.kept += 1  # a resumed run's finished reply
            tick(1)
            continue
        entries, replies = history(store, cell, k, k - 1)
        by_chatbot[cell.chatbot].append((cell, chatbot_view(entries, replies)))
    asks = [
        (bot, partial(_ask, store, writer, bot, items, k, seed, tick))
        for bot, items in ((chatbots[c], items) for c, items in by_chatbot.items())
    ]
    ask_chatbots(store, asks)


def _ask(
    store: Store,
    writer: DiaryWriter,
    bot: Chatbot,
    items: list[tuple[Cell, list[dict[str, str]]]],
    k: int,
    seed: int,
    tick: Tick,
) -> None:
    seeds = [derived_seed(seed, "reply", cell.twin_place("r", k)) for cell, _ in items]
    ask_chatbot(
        store,
        bot,
        [view for _, view in items],
        seeds,
        lambda i, text, flag, key: _reply_row(items[i][0], k, writer, text, flag, key),
        tick,
    )


def _reply_row(
    cell: Cell, k: int, writer: DiaryWriter, text: str, flag: str | None, key: str | None
) -> ReplyRow:
    return ReplyRow(
        reply_id=cell.reply_id(k),
        cell_id=cell.id,
        diarist=cell.diarist,
        profile=cell.profile,
        pattern=writer.profiles[cell.profile].pattern,
        chatbot=cell.chatbot,
        entry_index=k,
        entry_id=cell.entry_id(k),
        text=text,
        flag=flag,
        call_key=key,
    )


def run_conversations(
    store: Store,
    writer: DiaryWriter,
    chatbots: Mapping[str, Chatbot],
    cells: Sequence[Cell],
    entries: int,
    seed: int,
    tick: Tick,
) -> None:
    for k in range(1, entries + 1):
        write_entries(store, writer, cells, k, seed, tick)
        write_replies(store, writer, chatbots, cells, k, seed, tick)
