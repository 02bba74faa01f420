"""Phase one of a diary run: the four-entry loop. Entry k of every cell is written (batched,
steered and unsteered rows together), then every chatbot answers it; entry 1 of a diarist ×
profile is written once and shared by all chatbots. Each call's result is stored, with the row
made from it, before anything reads it; a call already in the store is not made again."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from chatbots.base import Chatbot
from diarists.cards import RoleCard
from diarists.templates import EntryTemplate
from diarists.writing import chatbot_view, entry_messages
from experiments.cells import Cell, derived_seed
from experiments.store import EntryRow, ReplyRow, Store, call_key
from model_access.local import GenerationSettings, LocalModel
from steering.apply import Steer, generate_steered

Tick = Callable[[int], None]


@dataclass(frozen=True)
class DiaristProfile:
    id: str
    pattern: str | None
    steer: Steer | None


@dataclass
class Writer:
    """The diarist side: one model writing every diarist under every profile."""

    model: LocalModel
    settings: GenerationSettings
    template: EntryTemplate
    cards: dict[str, RoleCard]
    profiles: dict[str, DiaristProfile]
    batch_size: int = 8

    def identity(self) -> dict[str, Any]:
        info = asdict(self.model.info())
        info.pop("location", None)
        return {"kind": "local", **info}


@dataclass(frozen=True)
class _EntryJob:
    entry_id: str
    cell: Cell
    k: int
    messages: list[dict[str, str]]
    seed: int
    key: str
    request: dict[str, Any]


def history(store: Store, cell: Cell, entries: int, replies: int) -> tuple[list[str], list[str]]:
    """The cell's first `entries` entries and first `replies` replies, from the store."""
    texts, answers = [], []
    for k in range(1, entries + 1):
        row = store.entry(cell.entry_id(k))
        assert row is not None, f"entry {cell.entry_id(k)} missing"
        texts.append(row.text)
    for k in range(1, replies + 1):
        reply = store.reply(cell.reply_id(k))
        assert reply is not None, f"reply {cell.reply_id(k)} missing"
        answers.append(reply.text)
    return texts, answers


def write_entries(
    store: Store, writer: Writer, cells: Sequence[Cell], k: int, seed: int, tick: Tick
) -> None:
    jobs: dict[str, _EntryJob] = {}
    for cell in cells:
        eid = cell.entry_id(k)
        if eid in jobs or store.has("entries", "entry_id", eid):
            continue
        earlier, replies = history(store, cell, k - 1, k - 1)
        messages = entry_messages(writer.cards[cell.diarist], writer.template, earlier, replies)
        profile = writer.profiles[cell.profile]
        entry_seed = derived_seed(seed, "entry", eid)
        request = {
            "messages": messages,
            "settings": asdict(writer.settings),
            "seed": entry_seed,
            "steer": profile.steer.spec() if profile.steer else None,
            "template_sha256": writer.template.sha256,
        }
        key = call_key("diarist", writer.identity(), request)
        jobs[eid] = _EntryJob(eid, cell, k, messages, entry_seed, key, request)

    pending = []
    for job in jobs.values():
        cached = store.get_call(job.key)
        if cached is None:
            pending.append(job)
        else:
            store.put_rows(_entry_row(job, writer, cached))
            tick(1)
    for start in range(0, len(pending), writer.batch_size):
        batch = pending[start : start + writer.batch_size]
        gens = generate_steered(
            writer.model,
            [writer.model.chat_ids(j.messages) for j in batch],
            writer.settings,
            seeds=[j.seed for j in batch],
            steers=[writer.profiles[j.cell.profile].steer for j in batch],
        )
        for job, gen in zip(batch, gens, strict=True):
            result = {
                "text": gen.text,
                "token_ids": list(gen.token_ids),
                "new_tokens": gen.new_tokens,
                "stopped_at_eos": gen.stopped_at_eos,
            }
            store.put_call(
                job.key,
                "diarist",
                writer.model.spec,
                job.request,
                result,
                _entry_row(job, writer, result),
            )
            tick(1)


def _entry_row(job: _EntryJob, writer: Writer, result: dict[str, Any]) -> EntryRow:
    text = str(result["text"]).strip()
    return EntryRow(
        entry_id=job.entry_id,
        diarist=job.cell.diarist,
        profile=job.cell.profile,
        pattern=writer.profiles[job.cell.profile].pattern,
        chatbot=None if job.k == 1 else job.cell.chatbot,
        entry_index=job.k,
        text=text,
        new_tokens=result.get("new_tokens"),
        flag=None if text else "empty",
        call_key=job.key,
    )


def write_replies(
    store: Store,
    writer: Writer,
    chatbots: dict[str, Chatbot],
    cells: Sequence[Cell],
    k: int,
    seed: int,
    tick: Tick,
) -> None:
    by_chatbot: dict[str, list[tuple[Cell, list[dict[str, str]]]]] = defaultdict(list)
    for cell in cells:
        if store.has("replies", "reply_id", cell.reply_id(k)):
            continue
        entries, replies = history(store, cell, k, k - 1)
        by_chatbot[cell.chatbot].append((cell, chatbot_view(entries, replies)))
    for chatbot_id, items in by_chatbot.items():
        bot = chatbots[chatbot_id]
        if not bot.calls_model:
            for (cell, _view), reply in zip(
                items, bot.reply_many([v for _, v in items], [0] * len(items)), strict=True
            ):
                store.put_rows(_reply_row(cell, k, writer, reply.text, reply.flag, None))
                tick(1)
            continue
        _model_replies(store, writer, bot, items, k, seed, tick)


def _model_replies(
    store: Store,
    writer: Writer,
    bot: Chatbot,
    items: list[tuple[Cell, list[dict[str, str]]]],
    k: int,
    seed: int,
    tick: Tick,
) -> None:
    pending = []
    for cell, view in items:
        reply_seed = derived_seed(seed, "reply", cell.reply_id(k))
        request = bot.request(view, reply_seed)
        key = call_key("chatbot", bot.identity(), request)
        cached = store.get_call(key)
        if cached is None:
            pending.append((cell, view, reply_seed, key, request))
        else:
            store.put_rows(_reply_row(cell, k, writer, cached["text"], cached["flag"], key))
            tick(1)
    chunk = 8  # store as results arrive, so a kill loses little
    for start in range(0, len(pending), chunk):
        part = pending[start : start + chunk]
        replies = bot.reply_many([p[1] for p in part], [p[2] for p in part])
        for (cell, _, _, key, request), reply in zip(part, replies, strict=True):
            result = {**reply.record, "text": reply.text, "flag": reply.flag}
            store.put_call(
                key,
                "chatbot",
                bot.id,
                request,
                result,
                _reply_row(cell, k, writer, reply.text, reply.flag, key),
            )
            tick(1)


def _reply_row(
    cell: Cell, k: int, writer: Writer, text: str, flag: str | None, key: str | None
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
    writer: Writer,
    chatbots: dict[str, Chatbot],
    cells: Sequence[Cell],
    entries: int,
    seed: int,
    tick: Tick,
) -> None:
    for k in range(1, entries + 1):
        write_entries(store, writer, cells, k, seed, tick)
        write_replies(store, writer, chatbots, cells, k, seed, tick)
