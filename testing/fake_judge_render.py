"""The chat renderers a vLLM server may put in front of a judge, for testing/fake_judge_server.py.
Each turns a chat request's messages into prompt token ids the way one of vLLM's paths does, and
refuses (RenderRefused, a 400) where that path refuses:

- "template": the tokenizer's own chat template through transformers' apply_chat_template
  (vLLM 0.33.0 `vllm/renderers/hf.py` safe_apply_chat_template; its errors become a 400 carrying
  transformers' message). continue_final_message keeps a trailing space only when the template
  does: transformers (`utils/chat_template_utils.py`) cuts the prompt at a tag appended to the
  final message and, when the template trimmed the tag's space, rstrips what is left.
- "trim": the same template with every message's content piped through `| trim`, as Llama-3's and
  Gemma's templates do: the prefill's trailing space is lost.
- "mistral": what vLLM runs for Mistral's official repos (`vllm/tokenizers/mistral.py`
  MistralTokenizer.apply_chat_template and _validate_apply_chat_template_args, and
  validate_request_params for `chat_template`): mistral_common 1.11.6
  `tokens/tokenizers/instruct.py` _encode_normal_content_assistant_message encodes assistant
  content with `.rstrip(" ")`, so the prefill loses its trailing spaces. The rest of the prompt is
  rendered with the tokenizer's own template (the test tokenizers are not tekken).
- "harmony": gpt-oss (`vllm/renderers/online_renderer.py` _make_request_with_harmony,
  `vllm/entrypoints/openai/parser/harmony_utils.py`): add_generation_prompt and
  continue_final_message are never read; a leading system message becomes the developer's
  instructions, an assistant message with content becomes a finished `final` message, and the
  prompt ends with a new `<|start|>assistant`. Text form from openai/harmony `src/encoding.rs`
  (system and developer sections joined by blank lines)."""

from __future__ import annotations

import datetime
from collections.abc import Mapping, Sequence
from typing import Any, Literal

Renderer = Literal["template", "trim", "mistral", "harmony"]
RENDERERS: tuple[Renderer, ...] = ("template", "trim", "mistral", "harmony")

# openai_harmony's SystemContent defaults, which vLLM keeps (it sets only effort and date).
HARMONY_IDENTITY = "You are ChatGPT, a large language model trained by OpenAI."
HARMONY_CUTOFF = "2024-06"
HARMONY_CHANNELS = (
    "# Valid channels: analysis, commentary, final. Channel must be included for every message."
)
HARMONY_EFFORTS = ("high", "medium", "low")  # harmony_utils.REASONING_EFFORT


class RenderRefused(Exception):
    """vLLM answers 400 with this message (and `param`, where vLLM names one)."""

    def __init__(self, message: str, param: str | None = None):
        super().__init__(message)
        self.param = param


def trimming_template(template: str) -> str:
    """The template with each message's content trimmed, as `| trim` templates do."""
    patched = template
    for spelling in ("message['content']", 'message["content"]', "message.content"):
        patched = patched.replace(spelling, f"({spelling} | trim)")
    if patched == template:
        raise ValueError("the chat template names no message content to trim")
    return patched


def _apply(
    tokenizer: Any, messages: list[dict[str, Any]], template: str | None, **flags: Any
) -> str:
    try:
        return str(
            tokenizer.apply_chat_template(messages, chat_template=template, tokenize=False, **flags)
        )
    except Exception as error:  # vLLM turns every template failure into a 400 with its text
        raise RenderRefused(str(error)) from error


def _mistral_checks(
    messages: Sequence[Mapping[str, Any]], body: Mapping[str, Any], add: bool, cont: bool
) -> None:
    if body.get("chat_template") is not None or body.get("chat_template_kwargs") is not None:
        raise RenderRefused(
            "chat_template is not supported for Mistral tokenizers.", param="chat_template"
        )
    if add and cont:
        raise RenderRefused(
            "Cannot set both `add_generation_prompt` and `continue_final_message` to True."
        )
    last = messages[-1].get("role")
    if add and last == "assistant":
        raise RenderRefused(
            "Cannot set `add_generation_prompt` to True when the last message is from the "
            "assistant. Consider using `continue_final_message` instead."
        )
    if cont and last != "assistant":
        raise RenderRefused(
            "Cannot set `continue_final_message` to True when the last message is not from "
            "the assistant."
        )


def harmony_text(
    messages: Sequence[Mapping[str, Any]], *, reasoning_effort: str | None, start_date: str
) -> str:
    if reasoning_effort == "none":
        raise RenderRefused(
            f"Harmony does not support reasoning_effort={reasoning_effort!r}",
            param="reasoning_effort",
        )
    if reasoning_effort is not None and reasoning_effort not in HARMONY_EFFORTS:
        raise RenderRefused(
            f"reasoning_effort={reasoning_effort!r} is not supported by Harmony. Supported "
            f"values are: {', '.join(HARMONY_EFFORTS)}.",
            param="reasoning_effort",
        )
    head = f"{HARMONY_IDENTITY}\nKnowledge cutoff: {HARMONY_CUTOFF}\nCurrent date: {start_date}"
    system = "\n\n".join([head, f"Reasoning: {reasoning_effort or 'medium'}", HARMONY_CHANNELS])
    parts = [f"<|start|>system<|message|>{system}<|end|>"]
    rest = list(messages)
    if rest and rest[0].get("role") in ("system", "developer"):
        instructions = str(rest.pop(0).get("content") or "")
        parts.append(f"<|start|>developer<|message|># Instructions\n\n{instructions}<|end|>")
    for message in rest:
        role, content = str(message.get("role")), str(message.get("content") or "")
        if role == "assistant":
            if content:  # an empty assistant message is dropped, not continued
                parts.append(f"<|start|>assistant<|channel|>final<|message|>{content}<|end|>")
        elif role in ("system", "developer"):
            parts.append(f"<|start|>developer<|message|># Instructions\n\n{content}<|end|>")
        else:
            parts.append(f"<|start|>{role}<|message|>{content}<|end|>")
    parts.append("<|start|>assistant")
    return "".join(parts)


def render_chat(
    tokenizer: Any,
    renderer: Renderer,
    body: Mapping[str, Any],
    *,
    start_date: str | None = None,
) -> str:
    """The prompt text a vLLM chat request is rendered to (encoded without adding special
    tokens: the text already holds them). `add_generation_prompt` defaults to true, as in
    vLLM's ChatCompletionRequest, so `continue_final_message` alone fails in transformers."""
    messages = [dict(m) for m in body["messages"]]
    add = bool(body.get("add_generation_prompt", True))
    cont = bool(body.get("continue_final_message", False))
    if renderer == "harmony":
        date = start_date or datetime.date.today().isoformat()
        return harmony_text(
            messages, reasoning_effort=body.get("reasoning_effort"), start_date=date
        )
    # build_chat_params (chat_completion/protocol.py): the request's chat_template_kwargs, then
    # its own flags and reasoning_effort over them; a template reads what it names.
    flags = dict(body.get("chat_template_kwargs") or {})
    flags |= {"add_generation_prompt": add, "continue_final_message": cont}
    if body.get("reasoning_effort") is not None:
        flags["reasoning_effort"] = body["reasoning_effort"]
    if renderer == "mistral":
        _mistral_checks(messages, body, add, cont)
        for m in messages:
            if m.get("role") == "assistant" and isinstance(m.get("content"), str):
                m["content"] = m["content"].rstrip(" ")
        return _apply(tokenizer, messages, body.get("chat_template"), **flags)
    template = body.get("chat_template") or tokenizer.chat_template
    if renderer == "trim":
        template = trimming_template(template)
    return _apply(tokenizer, messages, template, **flags)
