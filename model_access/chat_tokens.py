"""Text and tokens for a local model: render a chat with the tokenizer's own template, encode
and decode. LocalModel inherits this; it expects `tokenizer` and `spec` on the instance."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from diarylab.foundation.errors import LabError

Message = Mapping[str, str]


class ChatTokens:
    tokenizer: Any
    spec: str

    def render_chat(
        self,
        messages: Sequence[Message],
        *,
        add_generation_prompt: bool = True,
        continue_final_message: bool = False,
    ) -> str:
        if not getattr(self.tokenizer, "chat_template", None):
            raise LabError(
                f"model {self.spec!r} has no chat template",
                where="model",
                fix="use an instruct/chat model",
            )
        text = self.tokenizer.apply_chat_template(
            [dict(m) for m in messages],
            tokenize=False,
            add_generation_prompt=add_generation_prompt and not continue_final_message,
            continue_final_message=continue_final_message,
        )
        return str(text)

    def chat_ids(
        self,
        messages: Sequence[Message],
        *,
        add_generation_prompt: bool = True,
        continue_final_message: bool = False,
    ) -> list[int]:
        """Token ids of a chat. The rendered text already holds BOS and every special token, so
        it is encoded without adding special tokens again (no double BOS)."""
        text = self.render_chat(
            messages,
            add_generation_prompt=add_generation_prompt,
            continue_final_message=continue_final_message,
        )
        return self.encode(text)

    def encode(self, text: str) -> list[int]:
        return list(self.tokenizer(text, add_special_tokens=False)["input_ids"])

    def decode(self, ids: Sequence[int], *, skip_special_tokens: bool = True) -> str:
        return str(self.tokenizer.decode(list(ids), skip_special_tokens=skip_special_tokens))
