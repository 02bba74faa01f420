"""Exactly the text a judge reads before its answer, rendered on the client from the judge's own
tokenizer: the same text whether the judge is a local model or a server read by prompt tokens,
so the two readings can be compared token for token.

Three forms:
- raw: a JudgePrompt's text, as written.
- chat: the tokenizer's chat template with the prefill as an open assistant message
  (continue_final_message). Templates that trim message content (Llama-3, Gemma: `| trim`) lose
  the prefill's trailing space, and the space before a number is its own token in the lab's judge
  tokenizers, so it is put back.
- harmony (gpt-oss): its template renders a final assistant message finished and ignores
  continue_final_message, and a fresh assistant turn starts with a channel the model picks
  (analysis first). So the conversation is rendered up to the generation prompt
  "<|start|>assistant" with the reasoning effort fixed, and the final channel is opened by hand:
  "<|channel|>final<|message|>" + prefill. The judge answers in the final channel directly.
  A tokenizer that carries openai-harmony's encoding (`harmony_encoding`: the seed judge's
  stand-in, model_access/seed_tokenizers.py) is rendered by that library, the format's official
  renderer (vLLM renders gpt-oss's chats with it too), to the same generation prompt. Its
  developer message ends at "<|end|>" as the current gpt-oss template's does; an older template
  revision put a blank line before it, which a tokenizer of that revision still renders."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Literal

from diarylab.foundation.errors import LabError
from diarylab.rubric.prompts import JudgePrompt

HARMONY_REASONING_EFFORT = "low"  # a judge's answer is read at once: no analysis to spend on
HARMONY_GENERATION_PROMPT = "<|start|>assistant"
HARMONY_FINAL_CHANNEL = "<|channel|>final<|message|>"
# The harmony tokens a tokenizer must hold for the harmony form (openai/harmony's special tokens).
_HARMONY_TOKENS = ("<|start|>", "<|channel|>", "<|message|>", "<|end|>")
_EFFORTS = ("low", "medium", "high")
HARMONY_DATE = "2026-01-01"  # the "Current date" every harmony judge prompt states (see _harmony)
_HARMONY_DATE_LINE = re.compile(r"Current date: \d{4}-\d{2}-\d{2}")


@dataclass(frozen=True)
class RenderedPrompt:
    text: str  # exactly what the judge reads before its answer
    form: Literal["raw", "chat", "harmony"]
    reasoning_effort: str | None  # harmony only
    # The text's token ids where the renderer gives them (openai-harmony encodes what it
    # renders; tests/model_access/test_seed_tokenizers.py holds them equal to the tokenizer's
    # encoding of the text), so the text need not be encoded again; None: encode the text. Derived
    # from the text, so not part of what makes two renderings equal.
    ids: tuple[int, ...] | None = field(default=None, compare=False)


def is_harmony(tokenizer: Any) -> bool:
    """Does this tokenizer's chat template speak harmony? Its template writes channels and its
    vocabulary holds harmony's special tokens."""
    template = getattr(tokenizer, "chat_template", None)
    if not isinstance(template, str) or "<|channel|>" not in template:
        return False
    vocab = tokenizer.get_vocab()
    return all(token in vocab for token in _HARMONY_TOKENS)


def render_judge_prompt(
    tokenizer: Any, prompt: JudgePrompt, *, reasoning_effort: str = HARMONY_REASONING_EFFORT
) -> RenderedPrompt:
    if prompt.text is not None:
        return RenderedPrompt(prompt.text, "raw", None)
    encoding = getattr(tokenizer, "harmony_encoding", None)
    if encoding is not None:
        return _harmony_by_library(tokenizer, encoding, prompt, reasoning_effort)
    if not isinstance(getattr(tokenizer, "chat_template", None), str):
        raise LabError(
            "the judge's tokenizer has no chat template, so a chat prompt cannot be rendered",
            where="judge tokenizer",
            fix="use an instruct/chat model's tokenizer, or pass the exact prompt text",
        )
    if is_harmony(tokenizer):
        return _harmony(tokenizer, prompt, reasoning_effort)
    messages = prompt.chat_messages()
    if not prompt.prefill:
        return RenderedPrompt(_apply(tokenizer, messages, add_generation_prompt=True), "chat", None)
    text = _apply(tokenizer, messages, continue_final_message=True)
    if text.endswith(prompt.prefill):
        return RenderedPrompt(text, "chat", None)
    # A template that trims message content drops the prefill's trailing space; put it back.
    kept = prompt.prefill.rstrip()
    if kept and text.endswith(kept):
        return RenderedPrompt(text + prompt.prefill[len(kept) :], "chat", None)
    raise _no_prefill(prompt.prefill, text)


def _harmony(tokenizer: Any, prompt: JudgePrompt, effort: str) -> RenderedPrompt:
    _check_effort(effort)
    messages = [{"role": r, "content": c} for r, c in prompt.messages]
    text = _apply(tokenizer, messages, add_generation_prompt=True, reasoning_effort=effort)
    if not text.endswith(HARMONY_GENERATION_PROMPT):
        raise _no_prefill(prompt.prefill, text)
    if f"Reasoning: {effort}" not in text:
        raise LabError(
            "the harmony chat template does not write the reasoning effort it was given",
            where="judge tokenizer",
            fix="use the model's own gpt-oss chat template",
        )
    # With no prefill the answer is still the final channel's first token, never a channel name.
    # gpt-oss's template writes today's date into the system message; a judge read on two days
    # would read two prompts, so a stored reading could not be reproduced. The date is fixed.
    text = _HARMONY_DATE_LINE.sub(f"Current date: {HARMONY_DATE}", text)
    return RenderedPrompt(text + HARMONY_FINAL_CHANNEL + prompt.prefill, "harmony", effort)


def _check_effort(effort: str) -> None:
    if effort not in _EFFORTS:
        raise LabError(
            f"unknown reasoning effort {effort!r}",
            where="judge (harmony)",
            fix=f"use one of {', '.join(_EFFORTS)}",
        )


def _harmony_by_library(
    tokenizer: Any, encoding: Any, prompt: JudgePrompt, effort: str
) -> RenderedPrompt:
    from openai_harmony import (
        Conversation,
        DeveloperContent,
        Message,
        ReasoningEffort,
        Role,
        SystemContent,
    )

    _check_effort(effort)
    system = (
        SystemContent.new()
        .with_reasoning_effort(ReasoningEffort(effort.capitalize()))
        .with_conversation_start_date(HARMONY_DATE)  # fixed, as in _harmony
    )
    messages = [Message.from_role_and_content(Role.SYSTEM, system)]
    turns = list(prompt.messages)
    if turns and turns[0][0] in ("system", "developer"):
        instructions = DeveloperContent.new().with_instructions(turns.pop(0)[1])
        messages.append(Message.from_role_and_content(Role.DEVELOPER, instructions))
    for role, content in turns:
        if role == "user":
            messages.append(Message.from_role_and_content(Role.USER, content))
        elif role == "assistant":
            said = Message.from_role_and_content(Role.ASSISTANT, content)
            messages.append(said.with_channel("final"))
        else:
            raise _refused(ValueError(f"harmony has no {role!r} turn after the first message"))
    ids = encoding.render_conversation_for_completion(
        Conversation.from_messages(messages), Role.ASSISTANT
    )
    text = encoding.decode(ids)
    if not text.endswith(HARMONY_GENERATION_PROMPT):
        raise _no_prefill(prompt.prefill, text)
    # The opened final channel starts with a special token, which a tokenizer splits at first:
    # the whole text encodes to the rendered ids followed by the channel's own.
    opened = HARMONY_FINAL_CHANNEL + prompt.prefill
    tail = tokenizer(opened, add_special_tokens=False)["input_ids"]
    return RenderedPrompt(text + opened, "harmony", effort, ids=(*ids, *tail))


def _apply(tokenizer: Any, messages: list[dict[str, str]], **options: Any) -> str:
    """tokenizer.apply_chat_template as text; a template that refuses the conversation (its
    raise_exception, or transformers finding the continued message gone) is a LabError."""
    from jinja2 import TemplateError

    try:
        return str(tokenizer.apply_chat_template(messages, tokenize=False, **options))
    except (ValueError, TemplateError) as error:
        raise _refused(error) from error


def _refused(error: Exception) -> LabError:
    return LabError(
        f"the judge's chat template refused the conversation: {error}",
        where="judge tokenizer",
        fix="check the judge prompt's roles, or pass the exact prompt text",
    )


def _no_prefill(prefill: str, text: str) -> LabError:
    return LabError(
        f"the chat template does not end the prompt with the prefill {prefill!r} "
        f"(it ends {text[-60:]!r})",
        where="judge tokenizer",
        fix="use a model whose chat template keeps an open assistant message, "
        "or pass the exact prompt text",
    )
