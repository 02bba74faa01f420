"""An API model or an OpenAI-compatible server (vLLM) as a chatbot, through the lab's one door to
served models (model_access.served), which owns the concurrency limit, timeouts and retries."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from diarylab.chatbots.base import ChatbotReply, Message, with_system
from diarylab.chatbots.thinking import Thinking, request_extra, split_thinking
from diarylab.model_access.served import Completion, CompletionRequest, ServedClient
from diarylab.model_access.settings import GenerationSettings


class ServedChatbot:
    calls_model = True

    def __init__(
        self,
        id: str,
        client: ServedClient,
        generation: GenerationSettings,
        *,
        system: str | None = None,
        thinking: Thinking = "none",
    ) -> None:
        self.id = id
        self.client = client
        self.generation = generation
        self.system = system
        self.thinking = thinking

    @property
    def batch_size(self) -> int:
        # Requests are stored as they come back, a batch at a time; a batch fills every slot.
        return self.client.settings.concurrency

    def identity(self) -> dict[str, Any]:
        return {"kind": "served", "model": self.client.model}

    def _request(self, conversation: Sequence[Message], seed: int) -> CompletionRequest:
        return CompletionRequest.of(
            with_system(self.system, conversation),
            generation=self.generation,
            seed=seed,
            extra_body=request_extra(self.thinking),
        )

    def request(self, conversation: Sequence[Message], seed: int) -> dict[str, Any]:
        return self._request(conversation, seed).key_fields()

    def reply_many(
        self, conversations: Sequence[Sequence[Message]], seeds: Sequence[int]
    ) -> list[ChatbotReply]:
        requests = [self._request(c, s) for c, s in zip(conversations, seeds, strict=True)]
        return [self._reply(r) for r in self.client.complete_many(requests)]

    def _reply(self, completion: Completion) -> ChatbotReply:
        """The answer alone; the thinking, if any, beside it in the record (the store keeps
        it, the diarist never reads it), and the content as the server sent it."""
        split = split_thinking(
            completion.text, completion.reasoning, completion.finish_reason, self.thinking
        )
        record = completion.to_record()
        if split.found:
            record |= {"content": completion.text, "thinking": split.thinking}
        cut = completion.finish_reason == "length"
        return ChatbotReply.of(
            self.generation.ended(split.answer, cut),
            api_refusal=completion.refusal,
            truncated=cut,
            thinking_cut=split.cut,
            record=record,
            as_written=split.answer,
        )
