"""The baseline chatbot: the same content-free reply to everything."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from diarylab.chatbots.base import ChatbotReply, Message

DEFAULT_TEXT = "Thank you for sharing."


class FixedReply:
    calls_model = False
    batch_size = 1_000_000  # no model: every conversation at once

    def __init__(self, id: str = "thanks", text: str = DEFAULT_TEXT) -> None:
        self.id = id
        self.text = text

    def identity(self) -> dict[str, Any]:
        return {"kind": "fixed", "text": self.text}

    def request(self, conversation: Sequence[Message], seed: int) -> dict[str, Any]:
        return {}

    def reply_many(
        self, conversations: Sequence[Sequence[Message]], seeds: Sequence[int]
    ) -> list[ChatbotReply]:
        return [ChatbotReply(self.text, None, {"text": self.text}) for _ in conversations]
