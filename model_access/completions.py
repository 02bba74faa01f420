"""What goes over the served door and comes back: the request (everything that determines the
result — what cache keys are made of), the completion with its log-probabilities (each position's
alternatives with the token ids the server gave), and the parsing of an OpenAI-style chat
response into it. A response without content is a transport problem (EmptyResponse), never
model output."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from diarylab.model_access.settings import GenerationSettings


@dataclass(frozen=True)
class CompletionRequest:
    messages: tuple[tuple[str, str], ...]  # (role, content)
    generation: GenerationSettings
    seed: int | None = None
    top_logprobs: int = 0  # 0: no log-probabilities asked
    extra_body: str = "{}"  # JSON; server-specific options such as vLLM's continue_final_message

    @staticmethod
    def of(messages: Sequence[Mapping[str, str]], **kwargs: Any) -> CompletionRequest:
        extra = kwargs.pop("extra_body", None) or {}
        return CompletionRequest(
            messages=tuple((m["role"], m["content"]) for m in messages),
            extra_body=json.dumps(extra, sort_keys=True),
            **kwargs,
        )

    def key_fields(self) -> dict[str, Any]:
        """Everything that determines the result, for cache keys (with the model name)."""
        return {
            "messages": [list(m) for m in self.messages],
            "generation": self.generation.key(),
            "seed": self.seed,
            "top_logprobs": self.top_logprobs,
            "extra_body": json.loads(self.extra_body),
        }


@dataclass(frozen=True, slots=True)  # slots: ~130 are built per prompt of an exact reading
class Alternative:
    """One token's log-probability at one position, as the server gave it. Never merged with
    another entry that prints alike: two tokens can decode to the same text (two empty strings in
    llama.cpp's answers), and only the id tells them apart."""

    text: str  # as the server printed it: may be "", or vLLM's "token_id:N" placeholder
    logprob: float
    token_id: int | None  # llama.cpp's "id", vLLM's "token_id:N"; None when the server gave none
    bytes: tuple[int, ...] | None = None  # the token's UTF-8 bytes, where the server sends them

    def to_record(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "logprob": self.logprob,
            "token_id": self.token_id,
            "bytes": None if self.bytes is None else list(self.bytes),
        }

    @staticmethod
    def from_record(record: Any) -> Alternative:
        if isinstance(record, list | tuple):
            # Records written before token ids were kept hold [text, logprob] pairs.
            text, logprob = record
            return Alternative(str(text), float(logprob), token_id_of(None, str(text)))
        raw = record.get("bytes")
        return Alternative(
            text=record["text"],
            logprob=float(record["logprob"]),
            token_id=record.get("token_id"),
            bytes=None if raw is None else tuple(int(b) for b in raw),
        )


def listed(text: str, logprob: float, token_id: int | None) -> Alternative:
    """Alternative(text, logprob, token_id) without the frozen dataclass's __init__, which sets
    each field through object.__setattr__: an exact reading builds ~130 of these per prompt.
    The slots' own descriptors set the fields; the result is equal, and equally hashed, to the
    one __init__ builds."""
    alt = _new(Alternative)
    _set_text(alt, text)
    _set_logprob(alt, logprob)
    _set_id(alt, token_id)
    _set_bytes(alt, None)
    return alt


_new = object.__new__
_set_text = Alternative.__dict__["text"].__set__
_set_logprob = Alternative.__dict__["logprob"].__set__
_set_id = Alternative.__dict__["token_id"].__set__
_set_bytes = Alternative.__dict__["bytes"].__set__


@dataclass(frozen=True)
class TokenLogprob:
    """One generated position: the sampled token and the alternatives the server listed there,
    in the server's order (vLLM lists the sampled token first, then the requested ids)."""

    token: str
    logprob: float
    top: tuple[Alternative, ...] = ()
    token_id: int | None = None

    def to_record(self) -> dict[str, Any]:
        return {
            "token": self.token,
            "logprob": self.logprob,
            "token_id": self.token_id,
            "top": [a.to_record() for a in self.top],
        }

    @staticmethod
    def from_record(record: Mapping[str, Any]) -> TokenLogprob:
        return TokenLogprob(
            token=record["token"],
            logprob=float(record["logprob"]),
            top=tuple(Alternative.from_record(a) for a in record.get("top", ())),
            token_id=record.get("token_id"),
        )


@dataclass(frozen=True)
class Completion:
    text: str
    finish_reason: str | None
    logprobs: tuple[TokenLogprob, ...] | None
    served_model: str | None = None
    refusal: bool = False
    raw_usage: dict[str, Any] = field(default_factory=dict)
    # What a server's reasoning parser put beside the content (vLLM's reasoning_content);
    # chatbots/thinking.py keeps it apart from the answer.
    reasoning: str = ""

    def to_record(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "finish_reason": self.finish_reason,
            "logprobs": None if self.logprobs is None else [t.to_record() for t in self.logprobs],
            "served_model": self.served_model,
            "refusal": self.refusal,
            "usage": self.raw_usage,
        } | ({"reasoning": self.reasoning} if self.reasoning else {})

    @staticmethod
    def from_record(record: Mapping[str, Any]) -> Completion:
        lps = record.get("logprobs")
        return Completion(
            text=record["text"],
            finish_reason=record.get("finish_reason"),
            logprobs=None if lps is None else tuple(TokenLogprob.from_record(t) for t in lps),
            served_model=record.get("served_model"),
            refusal=bool(record.get("refusal")),
            raw_usage=dict(record.get("usage") or {}),
            reasoning=str(record.get("reasoning") or ""),
        )


class EmptyResponse(Exception):
    """A response without a body: a transport problem, retried, never stored as model output."""


def parse_response(response: Any) -> Completion:
    choices = getattr(response, "choices", None) or []
    if not choices:
        raise EmptyResponse("response has no choices")
    choice = choices[0]
    message = getattr(choice, "message", None)
    text = getattr(message, "content", None)
    finish = getattr(choice, "finish_reason", None)
    refusal_text = getattr(message, "refusal", None)
    logprobs = None
    lp = getattr(choice, "logprobs", None)
    content = getattr(lp, "content", None) if lp is not None else None
    if content is None and isinstance(lp, dict):
        content = lp.get("content")
    if content:
        logprobs = tuple(parse_token(t) for t in content)
    reasoning = getattr(message, "reasoning_content", None) or getattr(message, "reasoning", None)
    usage = getattr(response, "usage", None)
    wrote = usage_of(usage).get("completion_tokens", 0) > 0
    if text is None and (reasoning or logprobs or (finish == "length" and wrote)):
        # A reasoning parser took everything the model wrote (gpt-oss's analysis channel, a
        # Qwen3 reply that was all think markup up to the token cap), or found no channel to
        # call final: an answer without final text, whose log-probabilities are still what a
        # judge reads — not an empty body to retry and blame the server for.
        text = ""
    if text is None and not refusal_text:
        raise EmptyResponse(f"response has no content (finish_reason={finish})")
    return Completion(
        text=text if text is not None else str(refusal_text),
        finish_reason=finish,
        logprobs=logprobs,
        served_model=getattr(response, "model", None),
        refusal=bool(refusal_text) or finish == "content_filter",
        raw_usage=usage_of(usage),
        reasoning=reasoning if isinstance(reasoning, str) else "",
    )


def field_of(item: Any, name: str) -> Any:
    """A field of a parsed response part: litellm hands back objects with attributes, or plain
    dicts where it kept the server's JSON as it was (extra fields included)."""
    if isinstance(item, Mapping):
        return item.get(name)
    return getattr(item, name, None)


def token_id_of(given: Any, text: str) -> int | None:
    """The token id the server gave: llama.cpp's `id` field, else vLLM's "token_id:N" text
    (--return-tokens-as-token-ids, vllm/entrypoints/generate/base/serving.py,
    format_token_id_placeholder). Any other text carries no id."""
    if isinstance(given, int) and not isinstance(given, bool):
        return given
    return placeholder_id(text)


def placeholder_id(text: str) -> int | None:
    """N of "token_id:N", else None. isdecimal() is the regex \\d (Unicode Nd), which int()
    reads; it is checked by hand because an exact reading parses ~130 of these per prompt."""
    if text.startswith("token_id:"):
        digits = text[9:]
        if digits.isdecimal():
            return int(digits)
    return None


def parse_token(item: Any) -> TokenLogprob:
    """One position in the chat shape — {token, logprob, bytes, top_logprobs: [...]}, plus `id`
    on llama.cpp (tools/server/server-task.cpp, completion_token_output::probs_vector_to_json),
    which also answers /v1/completions in this shape."""
    token = _text(field_of(item, "token"))
    top = tuple(_alternative(t) for t in field_of(item, "top_logprobs") or ())
    return TokenLogprob(
        token, logprob_of(field_of(item, "logprob")), top, token_id_of(field_of(item, "id"), token)
    )


def _alternative(item: Any) -> Alternative:
    text = _text(field_of(item, "token"))
    return Alternative(
        text=text,
        logprob=logprob_of(field_of(item, "logprob")),
        token_id=token_id_of(field_of(item, "id"), text),
        bytes=_bytes(field_of(item, "bytes")),
    )


def _text(value: Any) -> str:
    return "" if value is None else str(value)


def _bytes(value: Any) -> tuple[int, ...] | None:
    if isinstance(value, list | tuple) and all(isinstance(b, int) for b in value):
        return tuple(value)
    return None


def logprob_of(value: Any) -> float:
    # A missing value must not read as log 0 = probability 1.
    if value is None:
        raise EmptyResponse("a token in the response has no log-probability")
    return float(value)


def usage_of(usage: Any) -> dict[str, Any]:
    if usage is None:
        return {}
    out = {}
    for k in ("prompt_tokens", "completion_tokens", "total_tokens"):
        v = usage.get(k) if isinstance(usage, dict) else getattr(usage, k, None)
        if isinstance(v, int):
            out[k] = v
    return out
