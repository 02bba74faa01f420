"""How every served call is tried: within the client's concurrency slots, up to max_retries times
more with jittered exponential backoff (never shorter than the server's Retry-After), across the
replicas, inside one retry budget; and how a failure is classified. Failures are classified by
the exception's class name, which litellm's mapped exceptions and the lean completions
transport's (model_access/completions_http.py) share: transient ones are retried, ones the user
can fix are a LabError at once, anything else is a bug and propagates."""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable
from typing import TypeVar

from diarylab.foundation.errors import LabError
from diarylab.model_access.completions import EmptyResponse
from diarylab.model_access.replicas import Replicas
from diarylab.model_access.retry_after import retry_after_s
from diarylab.model_access.settings import EndpointSettings

T = TypeVar("T")

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


class TransportFailure(LabError):
    """The server could not be reached or kept answering with nothing, after every retry."""


def with_retries(
    model: str,
    settings: EndpointSettings,
    slots: threading.BoundedSemaphore,
    replicas: Replicas,
    sleep: Callable[[float], None],
    attempt_once: Callable[[float, str | None], T],
) -> T:
    """Runs one call (given its timeout and replica URL) with the client's slots, retries,
    backoff and retry budget: the same for chat and token-prompt calls."""
    attempts = settings.max_retries + 1
    budget = settings.retry_budget_s
    # Seconds this call has used of its retry budget: each try as measured (from when it has
    # a slot), each wait between tries as asked of `sleep` (so an injected sleep counts too).
    spent = 0.0
    start = replicas.start()
    for attempt in range(attempts):
        url = replicas.url(start, attempt)  # a retry goes to the next replica
        if attempt:
            replicas.retried(url)
        try:
            with slots:
                began = time.monotonic()
                try:
                    # No try may run past the budget either.
                    return attempt_once(min(settings.timeout_s, budget - spent), url)
                finally:
                    spent += time.monotonic() - began
        except EmptyResponse as exc:
            replicas.failed(url)
            problem: Exception = exc
        except Exception as exc:
            name = type(exc).__name__
            if name in USER_FIXABLE:
                raise LabError(
                    f"{model} refused the request: {name}: {short(exc)}",
                    where=f"model {model}",
                    fix="check the model name, base URL and the key variable "
                    f"{settings.api_key_env or '(none set)'}",
                ) from exc
            if name not in TRANSIENT:
                raise
            replicas.failed(url)
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
                f"gave up on {model} after {attempt + 1} of {attempts} attempts: "
                f"retry budget of {budget:g} s (retry_budget_s) — {why}; last error: "
                f"{type(problem).__name__}: {short(problem)}",
                where=f"model {model} at {settings.where}",
                fix=f"raise retry_budget_s (now {budget:g} s) in the endpoint settings, or "
                "check that the server is up and within its rate limits; re-running resumes "
                "where the run stopped",
            ) from problem
        sleep(wait)
        spent += wait
    raise TransportFailure(
        f"no answer after {attempts} attempts ({type(problem).__name__}: {short(problem)})",
        where=f"model {model} at {settings.where}",
        fix="check that the server is up; re-running resumes where the run stopped",
    )


def short(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return text[:300]
