"""The lab's second door to models: served models (API providers and OpenAI-compatible servers
such as vLLM) through litellm. One request type, one client with a concurrency limit, timeouts
and retries with backoff. Keys are read from the environment at call time and never stored.

Transport settings (base URL, key variable, timeout, retries, concurrency) are the client's
EndpointSettings; what determines a result lives on the CompletionRequest — only the latter
belongs in cache keys."""

from __future__ import annotations

import email.utils
import json
import math
import os
import random
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from foundation.errors import LabError
from model_access.settings import EndpointSettings, GenerationSettings

# litellm fetches a price list over the network at import unless told not to.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

TRANSIENT = (
    "APIConnectionError",
    "Timeout",
    "RateLimitError",
    "ServiceUnavailableError",
    "InternalServerError",
    "BadGatewayError",
    "APIError",
)
USER_FIXABLE = (
    "AuthenticationError",
    "PermissionDeniedError",
    "NotFoundError",
    "BadRequestError",
    "UnsupportedParamsError",
    "ContextWindowExceededError",
    "PaymentRequiredError",
)


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


class TransportFailure(LabError):
    """The server could not be reached or kept answering with nothing, after every retry."""


class EmptyResponse(Exception):
    """A response without a body: a transport problem, retried, never stored as model output."""


class ServedClient:
    """The one door to served models. `model` is litellm's model string (e.g. "openai/gpt-4o",
    "hosted_vllm/mistralai/Mistral-Small-3.1-24B-Instruct-2503"); `settings` are the design's
    own EndpointSettings, read here and nowhere else."""

    def __init__(
        self,
        model: str,
        settings: EndpointSettings | None = None,
        *,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.model = model
        self.settings = settings or EndpointSettings()
        self._slots = threading.BoundedSemaphore(self.settings.concurrency)
        self._sleep = sleep

    def complete(self, request: CompletionRequest) -> Completion:
        settings = self.settings
        attempts = settings.max_retries + 1
        budget = settings.retry_budget_s
        # Seconds this call has used of its retry budget: each try as measured (from when it has
        # a slot), each wait between tries as asked of `sleep` (so an injected sleep counts too).
        spent = 0.0
        for attempt in range(attempts):
            try:
                with self._slots:
                    began = time.monotonic()
                    try:
                        # No try may run past the budget either.
                        return self._call(request, timeout=min(settings.timeout_s, budget - spent))
                    finally:
                        spent += time.monotonic() - began
            except EmptyResponse as exc:
                problem: Exception = exc
            except Exception as exc:
                name = type(exc).__name__
                if name in USER_FIXABLE:
                    raise LabError(
                        f"{self.model} refused the request: {name}: {_short(exc)}",
                        where=f"model {self.model}",
                        fix="check the model name, base URL and the key variable "
                        f"{settings.api_key_env or '(none set)'}",
                    ) from exc
                if name not in TRANSIENT:
                    raise
                problem = exc
            if attempt + 1 == attempts:
                break
            # Exponential backoff with jitter so parallel workers don't retry in lockstep; never
            # shorter than the server's Retry-After, when it sends one.
            backoff = settings.backoff_s * 2**attempt * (0.5 + random.random())
            asked = retry_after_s(problem)
            wait = backoff if asked is None else max(asked, backoff)
            left = budget - spent
            if wait >= left:
                if asked is not None and asked >= left:
                    why = (
                        f"the server asked to wait {asked:.1f} s before retrying (Retry-After), "
                        f"more than the {max(left, 0.0):.1f} s left"
                    )
                else:
                    why = f"the next wait of {wait:.1f} s would pass it ({spent:.1f} s spent)"
                raise TransportFailure(
                    f"gave up on {self.model} after {attempt + 1} of {attempts} attempts: "
                    f"retry budget of {budget:g} s (retry_budget_s) — {why}; last error: "
                    f"{type(problem).__name__}: {_short(problem)}",
                    where=f"model {self.model} at {settings.base_url or 'provider default'}",
                    fix=f"raise retry_budget_s (now {budget:g} s) in the endpoint settings, or "
                    "check that the server is up and within its rate limits; re-running resumes "
                    "where the run stopped",
                ) from problem
            self._sleep(wait)
            spent += wait
        raise TransportFailure(
            f"no answer after {attempts} attempts ({type(problem).__name__}: {_short(problem)})",
            where=f"model {self.model} at {settings.base_url or 'provider default'}",
            fix="check that the server is up; re-running resumes where the run stopped",
        )

    def complete_many(self, requests: Sequence[CompletionRequest]) -> list[Completion]:
        if not requests:
            return []
        with ThreadPoolExecutor(max_workers=self.settings.concurrency) as pool:
            return list(pool.map(self.complete, requests))

    def _call(self, request: CompletionRequest, *, timeout: float) -> Completion:
        import litellm

        litellm.suppress_debug_info = True
        kwargs: dict[str, Any] = {
            "model": self.model,
            "messages": [{"role": r, "content": c} for r, c in request.messages],
            "max_tokens": request.generation.max_new_tokens,
            "temperature": request.generation.temperature,
            "timeout": timeout,
            # Retries are ours (so that empty bodies are retried too, and Retry-After and the
            # retry budget are honoured once). num_retries=0 keeps litellm's own retry wrapper
            # off (litellm/utils.py, client(): `kwargs.get("num_retries") or litellm.num_retries`)
            # and, as litellm/main.py completion() sets max_retries = num_retries, is what reaches
            # the OpenAI SDK client of openai/ models (litellm/llms/openai/openai.py,
            # OpenAIChatCompletion.completion() pops "max_retries" with a default of 2, and
            # _get_openai_client() builds OpenAI(max_retries=...)); that SDK would otherwise retry
            # twice more on its own (openai/_base_client.py, _should_retry and
            # _calculate_retry_timeout). max_retries=0 says the same again, explicitly.
            # hosted_vllm/ models go through litellm's own HTTP handler, which does not retry.
            "num_retries": 0,
            "max_retries": 0,
            "stream": False,  # log-probs with streaming are unreliable in litellm
        }
        if self.settings.base_url:
            kwargs["api_base"] = self.settings.base_url
        if key := self._key():
            kwargs["api_key"] = key
        elif self.settings.base_url:
            # Self-hosted servers (vLLM) usually take no key, but the OpenAI client insists on one.
            kwargs["api_key"] = "EMPTY"
        if request.generation.top_p < 1.0:
            # Sent only when it restricts anything: some providers refuse temperature and top_p
            # together, and top_p = 1 is every provider's default.
            kwargs["top_p"] = request.generation.top_p
        if request.seed is not None:
            kwargs["seed"] = request.seed
        if request.top_logprobs:
            kwargs["logprobs"] = True
            kwargs["top_logprobs"] = request.top_logprobs
        extra = json.loads(request.extra_body)
        if extra:
            kwargs["extra_body"] = extra
        response = litellm.completion(**kwargs)
        return _parse(response)

    def _key(self) -> str | None:
        name = self.settings.api_key_env
        if not name:
            return None
        value = os.environ.get(name)
        if not value:
            raise LabError(
                f"environment variable {name} is not set",
                where=f"model {self.model}",
                fix=f"export {name}=<your key> before running",
            )
        return value


def _parse(response: Any) -> Completion:
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


def retry_after_s(exc: BaseException) -> float | None:
    """The seconds a failed try's server asked us to wait before the next (`Retry-After`, as
    seconds or an HTTP date, or the OpenAI-style `retry-after-ms`), or None when it said nothing.
    The longest wait found anywhere on the exception or its causes wins.

    Where litellm keeps the headers (litellm 1.110, checked with loopback requests): every mapped
    exception gets `litellm_response_headers`
    (litellm/litellm_core_utils/exception_mapping_utils.py, _get_response_headers() and
    exception_type()); `.response` is the real httpx.Response for openai/ models, but for
    hosted_vllm/ models it is a stand-in with no headers, so both are read."""
    found: list[float] = []
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        for headers in _header_sets(current):
            asked = _asked_wait(headers)
            if asked is not None:
                found.append(asked)
        current = current.__cause__ or current.__context__
    return max(found) if found else None


def _header_sets(exc: BaseException) -> list[Mapping[str, Any]]:
    out = []
    for get in (
        lambda: getattr(exc, "litellm_response_headers", None),
        lambda: getattr(exc, "headers", None),
        lambda: getattr(getattr(exc, "response", None), "headers", None),
    ):
        try:
            headers = get()
        except Exception:  # a provider's exception property may itself fail
            continue
        if headers is not None and hasattr(headers, "items"):
            out.append(headers)
    return out


def _asked_wait(headers: Mapping[str, Any]) -> float | None:
    lower = {str(k).lower(): str(v).strip() for k, v in headers.items()}
    waits = []
    if (ms := _number(lower.get("retry-after-ms"))) is not None:
        waits.append(ms / 1000)
    if (value := lower.get("retry-after")) is not None:
        seconds = _number(value)
        if seconds is None:
            seconds = _seconds_until(value)
        if seconds is not None:
            waits.append(seconds)
    # A date in the past means "now"; nonsense (NaN) is no answer; infinity stays (never retry).
    waits = [max(w, 0.0) for w in waits if not math.isnan(w)]
    return max(waits) if waits else None


def _number(value: str | None) -> float | None:
    try:
        return None if value is None else float(value)
    except ValueError:
        return None


def _seconds_until(http_date: str) -> float | None:
    """An HTTP date (RFC 9110 §10.2.3) as seconds from now, read as openai/_base_client.py
    _parse_retry_after_header does; a date without a zone is taken as UTC."""
    try:
        parts = email.utils.parsedate_tz(http_date)
        return None if parts is None else email.utils.mktime_tz(parts) - time.time()
    except (TypeError, ValueError, OverflowError, IndexError):
        return None


def _short(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return text[:300]
