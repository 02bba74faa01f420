"""What every chatbot is: given conversations so far (entries as user turns, replies as
assistant turns), return one reply each. Caching is the caller's job, so a chatbot also says
what identifies it and what determines a reply: the store's cached-call door keys the reply
by both."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from diarylab.chatbots.refusals import classify

Message = Mapping[str, str]


@dataclass(frozen=True)
class ChatbotReply:
    text: str  # the answer the diarist reads (never a chatbot's thinking)
    # "refusal" | "empty" | "truncated" | "thinking_cut" | None — stored as returned, never dropped
    flag: str | None
    record: dict[str, Any] = field(default_factory=dict)  # the raw result, for the store

    @staticmethod
    def of(
        text: str,
        *,
        api_refusal: bool = False,
        truncated: bool = False,
        thinking_cut: bool = False,
        record: dict[str, Any] | None = None,
        as_written: str | None = None,
    ) -> ChatbotReply:
        """Flags: "thinking_cut" when the reply ended inside its thinking (no answer: chatbots/
        thinking.py); else "refusal" or "empty"; else "truncated" when the token cap cut it.
        `as_written`: the reply before it was ended at a sentence (GenerationSettings.ended),
        kept in the record where it differs."""
        flag = (
            "thinking_cut"
            if thinking_cut
            else classify(text, api_refusal=api_refusal) or ("truncated" if truncated else None)
        )
        kept = dict(record or {})
        if as_written is not None and as_written != text:
            kept["as_written"] = as_written
        return ChatbotReply(text, flag, kept)


class Chatbot(Protocol):
    id: str
    calls_model: bool  # False for the fixed reply: nothing to cache

    @property
    def batch_size(self) -> int:
        """How many conversations reply_many gets at once; results are stored per batch."""

    def identity(self) -> dict[str, Any]:
        """The model behind the replies (never transport settings or keys)."""

    def request(self, conversation: Sequence[Message], seed: int) -> dict[str, Any]:
        """Everything that determines the reply to this conversation."""

    def reply_many(
        self, conversations: Sequence[Sequence[Message]], seeds: Sequence[int]
    ) -> list[ChatbotReply]: ...


def with_system(system: str | None, conversation: Sequence[Message]) -> list[dict[str, str]]:
    """No system message unless the design gives one."""
    head = [{"role": "system", "content": system}] if system else []
    return head + [dict(m) for m in conversation]
