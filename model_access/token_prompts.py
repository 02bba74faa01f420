"""Token-id prompts over the served door: a `/v1/completions` call whose prompt is a list of
token ids the client rendered itself (so no server-side chat template can change it), what
determines its result, and the parsing of the answer into positions and alternatives.

Two answer shapes reach here, both through litellm's TextCompletionResponse, which keeps every
field the server sent (checked against litellm 1.110.2: llms/openai/completion/handler.py builds
`TextCompletionResponse(**response.model_dump())`, and types/utils.py TextChoices passes unknown
fields through):
- vLLM's (vllm/entrypoints/openai/completion/protocol.py, CompletionLogProbs and
  CompletionResponseChoice; filled in completion/serving.py, _create_completion_logprobs): the
  legacy `logprobs` = {tokens, token_logprobs, top_logprobs: [{text: logprob}]}, and with
  `return_token_ids` the choice's `token_ids` and `prompt_token_ids`. A {text: logprob} dict
  holds one entry per printed text, so two tokens that print alike are merged by the server
  itself unless it prints "token_id:N" (`return_tokens_as_token_ids`): ask for that.
- llama.cpp's (tools/server/server-task.cpp, to_json_oaicompat): `logprobs` = {content: [...]},
  the chat shape, with `id` and `bytes` on every entry; no prompt ids are echoed."""

from __future__ import annotations

import json
import numbers
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from diarylab.foundation.errors import LabError
from diarylab.model_access.completions import (
    EmptyResponse,
    TokenLogprob,
    field_of,
    listed,
    logprob_of,
    parse_token,
    placeholder_id,
    usage_of,
)

# Set by the client from the request's own fields (or, for `stream`, fixed off because a streamed
# answer is not parsed); extra_body may not say them a second time.
_OWN_FIELDS = (
    "model",
    "prompt",
    "max_tokens",
    "temperature",
    "logprobs",
    "logprob_token_ids",
    "stream",
)


@dataclass(frozen=True)
class TokenPromptRequest:
    """A `/v1/completions` call whose prompt is token ids, read greedily (temperature 0)."""

    prompt_ids: tuple[int, ...]
    max_tokens: int = 1
    top_logprobs: int = 0  # the completions API's integer `logprobs`; 0 = none asked
    logprob_token_ids: tuple[int, ...] = ()  # vLLM: log-probs of exactly these ids
    extra_body: str = "{}"  # JSON of other server options, sent as they are

    def __post_init__(self) -> None:
        # Lists are accepted and kept as tuples, so that the request stays hashable and equal to
        # the same request built from tuples; numpy ints become ints, which litellm requires
        # (main.py text_completion() checks isinstance(prompt[0], int)).
        object.__setattr__(self, "prompt_ids", _ids(self.prompt_ids, "prompt_ids"))
        object.__setattr__(
            self, "logprob_token_ids", _ids(self.logprob_token_ids, "logprob_token_ids")
        )
        if not self.prompt_ids:
            raise LabError(
                "a token prompt has no tokens",
                where="TokenPromptRequest",
                fix="render the prompt to token ids first",
            )
        if self.max_tokens < 1 or self.top_logprobs < 0:
            raise LabError(
                f"max_tokens={self.max_tokens}, top_logprobs={self.top_logprobs}",
                where="TokenPromptRequest",
                fix="max_tokens ≥ 1 and top_logprobs ≥ 0",
            )
        extra = _extra(self.extra_body)
        if not isinstance(extra, dict) or set(extra) & set(_OWN_FIELDS):
            raise LabError(
                f"extra_body {self.extra_body} is not a JSON object or sets one of the "
                f"request's own fields {', '.join(_OWN_FIELDS)}",
                where="TokenPromptRequest",
                fix="put prompt ids, max_tokens, top_logprobs and logprob_token_ids in their "
                "own fields; extra_body is for other server options",
            )

    @staticmethod
    def of(
        prompt_ids: Sequence[int], *, extra_body: Mapping[str, Any] | None = None, **kwargs: Any
    ) -> TokenPromptRequest:
        return TokenPromptRequest(
            prompt_ids=tuple(prompt_ids),
            extra_body=json.dumps(dict(extra_body or {}), sort_keys=True),
            **kwargs,
        )

    def key_fields(self) -> dict[str, Any]:
        """Everything that determines the result, for cache keys (with the model name); the
        endpoint is named so that no chat request's key can equal it."""
        return {
            "endpoint": "completions",
            "prompt_ids": list(self.prompt_ids),
            "max_tokens": self.max_tokens,
            "temperature": 0.0,
            "top_logprobs": self.top_logprobs,
            "logprob_token_ids": list(self.logprob_token_ids),
            "extra_body": json.loads(self.extra_body),
        }

    def wire_fields(self) -> dict[str, Any]:
        """What litellm is given for this request, besides the model and transport settings."""
        fields: dict[str, Any] = {
            "prompt": list(self.prompt_ids),
            "max_tokens": self.max_tokens,
            "temperature": 0,
        }
        # vLLM refuses logprob_token_ids without `logprobs` (completion/protocol.py,
        # CompletionRequest.check_logprobs) and ignores its number when ids are given
        # (to_sampling_params: logprobs=None if self.logprob_token_ids): 0 is enough then.
        if self.top_logprobs or self.logprob_token_ids:
            fields["logprobs"] = self.top_logprobs
        extra = dict(_extra(self.extra_body))
        if self.logprob_token_ids:
            extra["logprob_token_ids"] = list(self.logprob_token_ids)
        if extra:
            fields["extra_body"] = extra
        return fields


@dataclass(frozen=True)
class TokenCompletion:
    text: str
    finish_reason: str | None
    positions: tuple[TokenLogprob, ...]  # one per generated token; () when none came back
    prompt_token_ids: tuple[int, ...] | None  # what the server says it read; None if not echoed
    served_model: str | None = None
    raw_usage: dict[str, Any] = field(default_factory=dict)
    system_fingerprint: str | None = None  # what the server says it is (vLLM: version + config)

    def to_record(self) -> dict[str, Any]:
        return {
            "system_fingerprint": self.system_fingerprint,
            "text": self.text,
            "finish_reason": self.finish_reason,
            "positions": [p.to_record() for p in self.positions],
            "prompt_token_ids": None
            if self.prompt_token_ids is None
            else list(self.prompt_token_ids),
            "served_model": self.served_model,
            "usage": self.raw_usage,
        }

    @staticmethod
    def from_record(record: Mapping[str, Any]) -> TokenCompletion:
        prompt_ids = record.get("prompt_token_ids")
        return TokenCompletion(
            text=record["text"],
            finish_reason=record.get("finish_reason"),
            positions=tuple(TokenLogprob.from_record(p) for p in record.get("positions", ())),
            prompt_token_ids=None if prompt_ids is None else tuple(prompt_ids),
            served_model=record.get("served_model"),
            raw_usage=dict(record.get("usage") or {}),
            system_fingerprint=record.get("system_fingerprint"),
        )


def parse_text_response(response: Any) -> TokenCompletion:
    choices = field_of(response, "choices") or []
    if not choices:
        raise EmptyResponse("response has no choices")
    return parse_choice(
        choices[0],
        field_of(response, "model"),
        usage_of(field_of(response, "usage")),
        field_of(response, "system_fingerprint"),
    )


def parse_choice(
    choice: Any, model: Any, usage: dict[str, Any], fingerprint: Any = None
) -> TokenCompletion:
    """One choice of a completions answer (a one-prompt request's first, or any of a list's)."""
    text = field_of(choice, "text")
    finish = field_of(choice, "finish_reason")
    if text is None:
        raise EmptyResponse(f"response has no text (finish_reason={finish})")
    prompt_ids = _echoed(field_of(choice, "prompt_token_ids"))
    return TokenCompletion(
        text=str(text),
        finish_reason=finish,
        positions=_positions(field_of(choice, "logprobs"), _echoed(field_of(choice, "token_ids"))),
        prompt_token_ids=prompt_ids,
        served_model=model,
        raw_usage=usage,
        system_fingerprint=fingerprint if isinstance(fingerprint, str) else None,
    )


def _positions(logprobs: Any, sampled_ids: tuple[int, ...] | None) -> tuple[TokenLogprob, ...]:
    if logprobs is None:
        return ()
    content = field_of(logprobs, "content")
    if content:  # llama.cpp: the chat shape, ids on every entry
        return tuple(parse_token(t) for t in content)
    tokens = list(field_of(logprobs, "tokens") or [])
    values = list(field_of(logprobs, "token_logprobs") or [])
    tops = list(field_of(logprobs, "top_logprobs") or [])
    if len(values) != len(tokens) or len(tops) not in (0, len(tokens)):
        raise EmptyResponse(
            f"malformed logprobs: {len(tokens)} tokens, {len(values)} log-probs, "
            f"{len(tops)} top lists"
        )
    # vLLM's `token_ids` (return_token_ids) name the sampled tokens when their text does not.
    ids = sampled_ids if sampled_ids is not None and len(sampled_ids) == len(tokens) else None
    positions = []
    for i, token in enumerate(tokens):
        text = "" if token is None else str(token)
        token_id = placeholder_id(text)
        if token_id is None and ids is not None:
            token_id = ids[i]
        top = (tops[i] if tops else None) or {}
        if None in top.values():  # a missing value must not read as log 0 = probability 1
            raise EmptyResponse("a token in the response has no log-probability")
        # JSON object keys are strings already; float() of each value as logprob_of does; the
        # "token_id:N" test of placeholder_id inlined (an exact reading parses ~130 a prompt).
        alternatives = tuple(
            [
                listed(
                    k, float(v), int(k[9:]) if k[:9] == "token_id:" and k[9:].isdecimal() else None
                )
                for k, v in top.items()
            ]
        )
        positions.append(TokenLogprob(text, logprob_of(values[i]), alternatives, token_id))
    return tuple(positions)


@lru_cache(maxsize=64)
def _extra(extra_body: str) -> Any:
    """extra_body read once per text: every request of a reading carries the same one. Callers
    copy what they change."""
    return json.loads(extra_body)


def _echoed(value: Any) -> tuple[int, ...] | None:
    # The types checked in one C loop: an echoed prompt is a whole prompt's ids, for every prompt
    # (a generator of isinstance calls was a tenth of a served judge's client time).
    if isinstance(value, list | tuple) and {*map(type, value)} <= {int}:
        return tuple(value)
    return None


def _ids(values: Sequence[Any], name: str) -> tuple[int, ...]:
    # The common case, a tuple of plain ints, checked in C loops (an exact reading builds
    # hundreds of requests per score; the Integral ABC check below costs far more).
    if type(values) is tuple and (
        not values or ({*map(type, values)} == {int} and min(values) >= 0)
    ):
        return values
    out = []
    for v in values:
        if isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < 0:
            raise LabError(
                f"{name} holds {v!r}, not a token id",
                where="TokenPromptRequest",
                fix="token ids are whole numbers ≥ 0",
            )
        out.append(int(v))
    return tuple(out)
