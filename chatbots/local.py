"""A local open model as a chatbot (unsteered), through the runtime."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

from diarylab.chatbots.base import ChatbotReply, Message, with_system
from diarylab.model_access.local import LocalModel
from diarylab.model_access.settings import GenerationSettings, LocalSettings


class LocalChatbot:
    calls_model = True

    def __init__(
        self,
        id: str,
        model: LocalModel,
        generation: GenerationSettings,
        local: LocalSettings,
        *,
        system: str | None = None,
    ) -> None:
        self.id = id
        self.model = model
        self.generation = generation
        self.local = local
        self.system = system

    @property
    def batch_size(self) -> int:
        return self.local.batch_size

    def identity(self) -> dict[str, Any]:
        info = asdict(self.model.info())
        info.pop("location", None)  # where the files sit doesn't change the replies
        return {"kind": "local", **info}

    def request(self, conversation: Sequence[Message], seed: int) -> dict[str, Any]:
        return {
            "messages": with_system(self.system, conversation),
            "generation": self.model.generation_key(self.generation),
            "seed": seed,
        }

    def reply_many(
        self, conversations: Sequence[Sequence[Message]], seeds: Sequence[int]
    ) -> list[ChatbotReply]:
        prompts = [self.model.chat_ids(with_system(self.system, c)) for c in conversations]
        out: list[ChatbotReply] = []
        for start in range(0, len(prompts), self.batch_size):
            gens = self.model.generate(
                prompts[start : start + self.batch_size],
                self.generation,
                seeds=list(seeds[start : start + self.batch_size]),
            )
            out += [
                ChatbotReply.of(
                    self.generation.ended(g.text.strip(), not g.stopped_at_eos),
                    truncated=not g.stopped_at_eos,
                    as_written=g.text.strip(),
                    record={
                        "text": g.text.strip(),
                        "new_tokens": g.new_tokens,
                        "stopped_at_eos": g.stopped_at_eos,
                    },
                )
                for g in gens
            ]
        return out
