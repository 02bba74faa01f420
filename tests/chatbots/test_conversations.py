"""The four-entry loop with fake chatbots: shared first entries, what each chatbot sees, the
fixed baseline, refusal flags, transport failures retried and never stored, no repeated calls."""

from __future__ import annotations

import json

import pytest

from diarylab.chatbots.base import ChatbotReply
from diarylab.chatbots.fixed import FixedReply
from diarylab.chatbots.served import ServedChatbot
from diarylab.diarists.cards import load_cards
from diarylab.diarists.profiles import UNSTEERED, Profile
from diarylab.diarists.templates import load_entry_template
from diarylab.experiments.engine.store import Store
from diarylab.experiments.engine.writes import Writer
from diarylab.experiments.kinds.diary.cells import Cell
from diarylab.experiments.kinds.diary.conversations import run_conversations
from diarylab.experiments.kinds.diary.rows import EntryRow, ReplyRow
from diarylab.model_access.served import ServedClient
from diarylab.model_access.settings import EndpointSettings, GenerationSettings, LocalSettings
from diarylab.steering.apply import Steer
from diarylab.steering.vectors import random_vector
from diarylab.testing.fake_openai import chat_response, serve
from diarylab.testing.stores import call


class RecordingBot:
    """Echoes which entry it saw; remembers every conversation it was shown."""

    calls_model = True
    batch_size = 8

    def __init__(self, id: str, text: str = "reply") -> None:
        self.id = id
        self.text = text
        self.seen: list[list[dict[str, str]]] = []

    def identity(self):
        return {"kind": "fake", "id": self.id}

    def request(self, conversation, seed):
        return {"messages": [dict(m) for m in conversation], "seed": seed}

    def reply_many(self, conversations, seeds):
        self.seen += [list(c) for c in conversations]
        return [ChatbotReply.of(f"{self.text} #{len(c) // 2 + 1}") for c in conversations]


def make_writer(tiny_model, steered: bool = True) -> Writer:
    profiles = {"unsteered": UNSTEERED}
    if steered:
        vector = random_vector(tiny_model.info(), seed=1, pattern_id="social_isolation")
        profiles["lonely"] = Profile("lonely", "social_isolation", Steer(vector, (1,), 2.0))
    return Writer(
        tiny_model,
        GenerationSettings(max_new_tokens=6, temperature=0.9),
        LocalSettings(batch_size=3),
        load_entry_template(),
        {c.id: c for c in load_cards(["amara", "tomasz"])},
        profiles,
    )


def cells_for(bots, profiles=("unsteered", "lonely"), entries=3):
    return [
        Cell(f"{d}.{p}.{b}", d, p, b, entries)
        for d in ("amara", "tomasz")
        for p in profiles
        for b in bots
    ]


def run(tmp_path, tiny_model, bots, *, entries=3, store=None):
    store = store or Store(tmp_path / "store.sqlite", (EntryRow, ReplyRow))
    cells = cells_for([b.id for b in bots], entries=entries)
    run_conversations(
        store,
        make_writer(tiny_model),
        {b.id: b for b in bots},
        cells,
        entries,
        seed=11,
        tick=lambda n: None,
    )
    return store, cells


def test_first_entry_is_written_once_and_shared(tmp_path, tiny_model):
    a, b = RecordingBot("a"), RecordingBot("b")
    store, cells = run(tmp_path, tiny_model, [a, b])
    firsts = store.select("entries", ["entry_id", "chatbot"], where={"entry_index": 1})
    assert len(firsts) == 4 and all(chatbot is None for _, chatbot in firsts)
    first_seen_by_a = [c[0]["content"] for c in a.seen if len(c) == 1]
    first_seen_by_b = [c[0]["content"] for c in b.seen if len(c) == 1]
    assert sorted(first_seen_by_a) == sorted(first_seen_by_b)
    assert store.count("entries") == 4 + 4 * 2 * 2  # shared firsts + entries 2..3 per cell
    assert store.count("replies") == 8 * 3


def test_chatbot_sees_whole_conversation_as_user_and_assistant_turns(tmp_path, tiny_model):
    bot = RecordingBot("a")
    store, cells = run(tmp_path, tiny_model, [bot])
    last = max(bot.seen, key=len)
    assert [m["role"] for m in last] == ["user", "assistant", "user", "assistant", "user"]
    assert not any(m["role"] == "system" for m in last)
    cell = cells[0]
    entries = [store.get(EntryRow, cell.entry_id(k)).text for k in (1, 2, 3)]
    views = [v for v in bot.seen if v[0]["content"] == entries[0] and len(v) == 5]
    assert [m["content"] for m in views[0][::2]] == entries
    assert views[0][1]["content"] == store.get(ReplyRow, cell.reply_id(1)).text


def test_diarist_reads_the_reply_before_writing_again(tmp_path, tiny_model):
    bot = RecordingBot("a", text="A DISTINCT REPLY")
    store, cells = run(tmp_path, tiny_model, [bot], entries=2)
    key = store.get(EntryRow, cells[0].entry_id(2)).call_key
    request, _ = call(store, key)
    roles = [m["role"] for m in request["messages"]]
    assert roles == ["system", "user", "assistant", "user"]
    assert "A DISTINCT REPLY #1" in request["messages"][-1]["content"]
    assert (
        request["messages"][2]["content"].strip() == store.get(EntryRow, cells[0].entry_id(1)).text
    )


def test_fixed_reply_baseline_calls_no_model(tmp_path, tiny_model):
    store, _ = run(tmp_path, tiny_model, [FixedReply()])
    texts = {r[0] for r in store.select("replies", ["text"])}
    assert texts == {"Thank you for sharing."}
    assert store.count("calls", where={"kind": "chatbot"}) == 0


def test_steered_and_unsteered_rows_differ_and_are_recorded(tmp_path, tiny_model):
    store, _ = run(tmp_path, tiny_model, [FixedReply()], entries=1)
    rows = store.select("entries", ["profile", "call_key"])
    steers = {p: call(store, key)[0]["steer"] for p, key in rows}
    assert steers["unsteered"] is None and steers["lonely"]["layers"] == [1]


def test_rerun_makes_no_calls(tmp_path, tiny_model):
    bot = RecordingBot("a")
    store, _ = run(tmp_path, tiny_model, [bot])
    before = store.dump("entries"), store.dump("replies")
    made = store.made
    bot2 = RecordingBot("a")
    store2 = Store(tmp_path / "store.sqlite", (EntryRow, ReplyRow))
    run(tmp_path, tiny_model, [bot2], store=store2)
    assert store2.made == 0 and bot2.seen == []
    assert (store2.dump("entries"), store2.dump("replies")) == before
    assert made > 0


def served_bot(url: str) -> ServedChatbot:
    settings = EndpointSettings(base_url=url, max_retries=3, backoff_s=0)
    client = ServedClient("openai/fake", settings, sleep=lambda s: None)
    return ServedChatbot("api", client, GenerationSettings(max_new_tokens=20, temperature=0.0))


def test_refusal_is_stored_as_returned_and_flagged(tmp_path, tiny_model):
    with serve(lambda req: (200, chat_response("I'm sorry, but I can't help with that."))) as s:
        store, _ = run(tmp_path, tiny_model, [served_bot(s.base_url)], entries=1)
    flags = store.select("replies", ["flag", "text"])
    assert {f for f, _ in flags} == {"refusal"}
    assert flags[0][1] == "I'm sorry, but I can't help with that."


def test_transport_failure_is_retried_and_never_stored(tmp_path, tiny_model):
    answers = iter(
        [(200, chat_response(None, finish_reason=None)), (502, {"error": "gateway"})]
        + [(200, chat_response("a kind reply"))] * 100
    )
    with serve(lambda req: next(answers)) as s:
        store, _ = run(tmp_path, tiny_model, [served_bot(s.base_url)], entries=1)
    texts = [r[0] for r in store.select("replies", ["text"])]
    assert texts == ["a kind reply"] * 4
    stored = [r[4] for r in store.calls_of(["chatbot"])]
    assert all("a kind reply" in r for r in stored) and len(stored) == 4


def test_total_transport_failure_stops_with_nothing_stored_for_it(tmp_path, tiny_model):
    from diarylab.model_access.served import TransportFailure

    with serve(lambda req: (503, {"error": "down"})) as s, pytest.raises(TransportFailure):
        run(tmp_path, tiny_model, [served_bot(s.base_url)], entries=1)
    store = Store(tmp_path / "store.sqlite", (EntryRow, ReplyRow))
    assert store.count("replies") == 0
    assert store.count("entries") == 4  # entries written before the failure are kept


def test_entries_and_replies_cut_by_the_token_cap_are_flagged(tmp_path, tiny_model):
    cut = chat_response("A reply that went on and", finish_reason="length")
    with serve(lambda req: (200, cut)) as s:
        store, _ = run(tmp_path, tiny_model, [served_bot(s.base_url)], entries=1)
    entries = store.select("entries", ["flag", "new_tokens", "call_key"])
    for flag, new_tokens, key in entries:
        _, result = call(store, key)
        assert flag == (None if result["stopped_at_eos"] else "truncated")
        assert new_tokens <= 6
    assert any(flag == "truncated" for flag, _, _ in entries)  # 6 tokens rarely reach EOS
    assert {f for (f,) in store.select("replies", ["flag"])} == {"truncated"}


def test_a_steered_twin_draws_the_same_noise_as_its_unsteered_twin(tmp_path, tiny_model):
    """Common random numbers: at strength 0 the 'steered' diarist writes exactly what the
    unsteered one writes, so a difference at strength > 0 is the steering's, not the draw's."""
    writer = make_writer(tiny_model)
    vector = writer.profiles["lonely"].steer.vector
    writer.profiles["lonely"] = Profile("lonely", "social_isolation", Steer(vector, (1,), 0.0))
    store = Store(tmp_path / "store.sqlite", (EntryRow, ReplyRow))
    cells = cells_for(["thanks"], entries=2)
    run_conversations(store, writer, {"thanks": FixedReply()}, cells, 2, seed=11, tick=lambda n: 0)
    texts = {
        (row.diarist, row.profile, row.entry_index): row.text
        for row in (EntryRow(*r) for r in store.select("entries"))
    }
    for (diarist, profile, k), text in texts.items():
        if profile == "lonely":
            assert text == texts[(diarist, "unsteered", k)], (diarist, k)


def test_a_thinking_chatbots_replies_are_stored_without_their_thinking(tmp_path, tiny_model):
    """An open-qwen-like chatbot served without a reasoning parser: its <think> block stays in
    the stored call's result, never in the reply row or in what the diarist reads next; a
    reply cut inside its thinking is a failed reply (chatbots/thinking.py)."""
    answers = iter(
        [(200, chat_response("<think>\nTHOUGHT-7 about her\n</think>\n\nThat sounds heavy."))] * 3
        + [(200, chat_response("<think>\nTHOUGHT-7 and then", finish_reason="length"))] * 100
    )
    with serve(lambda req: next(answers)) as s:
        settings = EndpointSettings(base_url=s.base_url, max_retries=0)
        client = ServedClient("hosted_vllm/qwen-like", settings)
        bot = ServedChatbot(
            "open-qwen", client, GenerationSettings(max_new_tokens=20), thinking="apart"
        )
        store, _ = run(tmp_path, tiny_model, [bot], entries=2)
    replies = store.select("replies", ["text", "flag", "call_key"])
    assert sorted(flag or "" for _, flag, _ in replies).count("thinking_cut") == 5
    for text, flag, key in replies:
        assert "THOUGHT-7" not in text and "<think>" not in text
        assert text == ("" if flag == "thinking_cut" else "That sounds heavy.")
        assert "THOUGHT-7" in call(store, key)[1]["thinking"]  # kept beside it
    for (key,) in store.select("entries", ["call_key"], where={"entry_index": 2}):
        assert "THOUGHT-7" not in json.dumps(call(store, key)[0])  # the diarist never reads it
