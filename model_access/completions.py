"""What goes over the served door and comes back: the request (everything that determines the
result — what cache keys are made of), the completion with its log-probabilities, and the
parsing of an OpenAI-style response into it. A response without content is a transport problem
(EmptyResponse), never model output."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from model_access.settings import GenerationSettings


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


@dataclass(frozen=True)
class TokenLogprob:
    token: str
    logprob: float
    top: tuple[tuple[str, float], ...] = ()


@dataclass(frozen=True)
class Completion:
    text: str
    finish_reason: str | None
    logprobs: tuple[TokenLogprob, ...] | None
    served_model: str | None = None
    refusal: bool = False
    raw_usage: dict[str, Any] = field(default_factory=dict)

    def to_record(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "finish_reason": self.finish_reason,
            "logprobs": None
            if self.logprobs is None
            else [
                {"token": t.token, "logprob": t.logprob, "top": [list(p) for p in t.top]}
                for t in self.logprobs
            ],
            "served_model": self.served_model,
            "refusal": self.refusal,
            "usage": self.raw_usage,
        }

    @staticmethod
    def from_record(record: Mapping[str, Any]) -> Completion:
        lps = record.get("logprobs")
        return Completion(
            text=record["text"],
            finish_reason=record.get("finish_reason"),
            logprobs=None
            if lps is None
            else tuple(
                TokenLogprob(t["token"], t["logprob"], tuple((a, b) for a, b in t["top"]))
                for t in lps
            ),
            served_model=record.get("served_model"),
            refusal=bool(record.get("refusal")),
            raw_usage=dict(record.get("usage") or {}),
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
    if text is None and not refusal_text:
        raise EmptyResponse(f"response has no content (finish_reason={finish})")
    logprobs = None
    lp = getattr(choice, "logprobs", None)
    content = getattr(lp, "content", None) if lp is not None else None
    if content is None and isinstance(lp, dict):
        content = lp.get("content")
    if content:
        logprobs = tuple(_token(t) for t in content)
    usage = getattr(response, "usage", None)
    return Completion(
        text=text if text is not None else str(refusal_text),
        finish_reason=finish,
        logprobs=logprobs,
        served_model=getattr(response, "model", None),
        refusal=bool(refusal_text) or finish == "content_filter",
        raw_usage=_usage(usage),
    )


def _token(item: Any) -> TokenLogprob:
    get = item.get if isinstance(item, dict) else lambda k, d=None: getattr(item, k, d)
    top = get("top_logprobs") or []
    pairs = []
    for t in top:
        tget = t.get if isinstance(t, dict) else lambda k, d=None, t=t: getattr(t, k, d)
        pairs.append((str(tget("token")), _logprob(tget("logprob"))))
    return TokenLogprob(str(get("token")), _logprob(get("logprob")), tuple(pairs))


def _logprob(value: Any) -> float:
    # A missing value must not read as log 0 = probability 1.
    if value is None:
        raise EmptyResponse("a token in the response has no log-probability")
    return float(value)


def _usage(usage: Any) -> dict[str, Any]:
    if usage is None:
        return {}
    out = {}
    for k in ("prompt_tokens", "completion_tokens", "total_tokens"):
        v = usage.get(k) if isinstance(usage, dict) else getattr(usage, k, None)
        if isinstance(v, int):
            out[k] = v
    return out
