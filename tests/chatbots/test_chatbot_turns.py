"""The engine's one way of asking a chatbot through the store: a model chatbot's replies are
stored as calls keyed by its identity and request (a second ask reads them back, calling
nothing), flags are kept as returned, and the fixed reply writes its rows without a call."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import pytest

from diarylab.chatbots.base import ChatbotReply
from diarylab.chatbots.fixed import FixedReply
from diarylab.experiments.engine.chatbot_turns import ask_chatbot
from diarylab.experiments.engine.store import Store, call_key


@dataclass(frozen=True)
class Answer:
    TABLE: ClassVar[str] = "answers"
    answer_id: str
    text: str
    flag: str | None
    call_key: str | None


class CountingBot:
    """Answers "no" to the second conversation (a refusal) and counts what it was asked."""

    id = "counting"
    calls_model = True
    batch_size = 2

    def __init__(self) -> None:
        self.asked: list[tuple[str, int]] = []

    def identity(self):
        return {"kind": "fake", "id": self.id}

    def request(self, conversation, seed):
        return {"messages": [dict(m) for m in conversation], "seed": seed}

    def reply_many(self, conversations, seeds):
        self.asked += [(c[-1]["content"], s) for c, s in zip(conversations, seeds, strict=True)]
        texts = [c[-1]["content"] for c in conversations]
        return [
            ChatbotReply.of("I can't help with that." if t == "entry 1" else f"answer to {t}")
            for t in texts
        ]


VIEWS = [[{"role": "user", "content": f"entry {i}"}] for i in range(3)]


def _row(i: int, text: str, flag: str | None, key: str | None) -> Answer:
    return Answer(f"a{i}", text, flag, key)


def test_replies_are_stored_once_and_read_back(tmp_path):
    store = Store(tmp_path / "store.sqlite", [Answer])
    bot, ticks = CountingBot(), []
    ask_chatbot(store, bot, VIEWS, [7, 8, 9], _row, ticks.append)
    assert bot.asked == [("entry 0", 7), ("entry 1", 8), ("entry 2", 9)]
    assert store.made == 3 and sum(ticks) == 3
    first = store.get(Answer, "a0")
    assert first.text == "answer to entry 0" and first.flag is None
    assert first.call_key == call_key("chatbot", bot.identity(), bot.request(VIEWS[0], 7))
    assert store.get(Answer, "a1").flag == "refusal"  # stored as returned, flagged

    again = CountingBot()
    ask_chatbot(store, again, VIEWS, [7, 8, 9], _row, ticks.append)
    assert again.asked == [] and store.cached == 3
    store.close()


def test_the_fixed_reply_writes_rows_without_a_call(tmp_path):
    store = Store(tmp_path / "store.sqlite", [Answer])
    ask_chatbot(store, FixedReply(), VIEWS[:2], [1, 2], _row, lambda n: None)
    assert [store.get(Answer, f"a{i}").text for i in range(2)] == ["Thank you for sharing."] * 2
    assert store.get(Answer, "a0").call_key is None and store.made == 0
    with pytest.raises(ValueError, match="2 seeds for 3"):
        ask_chatbot(store, FixedReply(), VIEWS, [1, 2], _row, lambda n: None)
    store.close()
