"""How long a server asked us to wait: `Retry-After` (seconds or an HTTP date) or the
OpenAI-style `retry-after-ms`, wherever litellm put the response headers on its exception."""

from __future__ import annotations

import email.utils
import math
import time
from collections.abc import Mapping
from typing import Any


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
