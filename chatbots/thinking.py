"""What a thinking chatbot writes before its answer, kept apart from the answer.

Qwen3 and its kin think unless their chat template is told `enable_thinking = false`. A vLLM
server started without a reasoning parser returns the thinking inside the reply's content, in a
`<think> ... </think>` block (the template may open the block itself, so the content can start
inside it); with `--reasoning-parser`, the thinking comes in a separate field
(`reasoning_content`, or `reasoning` on newer servers) and the content is the answer alone. A
reply cut by the token cap before `</think>` holds thinking and no answer.

The diarist must only ever read the answer. So every reply of a served chatbot is split here,
whatever the design says: the answer is what follows the last `</think>`, the thinking is kept
beside it in the store, and a reply that ended inside its thinking is a failed reply (flag
`thinking_cut`, empty text), never a text. The design's `thinking` setting says what the lab
asks of the server and expects back:

- "none": the chatbot does not think (the default). `design check` refuses a served chatbot
  whose probe shows thinking under this setting.
- "off": ask the chat template not to think (`chat_template_kwargs = {enable_thinking =
  false}` in the request, which vLLM hands to the template).
- "apart": let it think. A reply without `</think>` that the token cap cut, or that opens a
  `<think>` block, ended inside its thinking."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

Thinking = Literal["none", "off", "apart"]
OPEN, CLOSE = "<think>", "</think>"
CUT_FLAG = "thinking_cut"
# What "off" sends: vLLM passes chat_template_kwargs to the template (Qwen3's switch).
THINKING_OFF = {"chat_template_kwargs": {"enable_thinking": False}}


def request_extra(thinking: Thinking) -> dict[str, Any]:
    """The extra request fields a setting asks for (part of the request, so of its cache key)."""
    return dict(THINKING_OFF) if thinking == "off" else {}


@dataclass(frozen=True)
class Split:
    answer: str  # what the diarist reads
    thinking: str  # kept beside it in the store, never shown
    cut: bool  # the reply ended inside its thinking: there is no answer

    found: bool = True  # the reply showed thinking (a think marker or a reasoning field)


def split_thinking(
    content: str, reasoning: str, finish_reason: str | None, thinking: Thinking
) -> Split:
    """The answer and the thinking of one reply (content as the server returned it, the
    reasoning field a server's parser filled). A think block that was closed at once still
    counts as found: the model was in its thinking mode."""
    reasoning = reasoning.strip()
    if CLOSE in content:
        before, _, answer = content.rpartition(CLOSE)
        inner = before.replace(OPEN, "", 1).strip()
        # Closed, but the token cap came before any answer: cut all the same.
        cut = not answer.strip() and finish_reason == "length"
        return Split(answer.strip(), "\n".join(t for t in (reasoning, inner) if t), cut)
    if content.lstrip().startswith(OPEN):  # opened, never closed
        inner = content.lstrip()[len(OPEN) :].strip()
        return Split("", "\n".join(t for t in (reasoning, inner) if t), True)
    if reasoning and not content.strip():
        # A reasoning parser took everything the model wrote: no answer came after it.
        return Split("", reasoning, True)
    if thinking == "apart" and finish_reason == "length" and not reasoning:
        # The template opened the block and the token cap came before it was closed.
        return Split("", content.strip(), True)
    # Thinking taken out ahead of the answer (by a parser, or by litellm, which moves a closed
    # block at the start of the content to reasoning_content) leaves the blank lines after it.
    return Split(content.strip() if reasoning else content, reasoning, False, bool(reasoning))
