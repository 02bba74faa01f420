"""The lean transport of token-prompt `/v1/completions` requests: one POST of JSON over a pooled,
kept-alive httpx connection per replica, instead of litellm's text_completion(), which costs
~70 ms of client CPU per request (its logging, cost and response-model machinery; measured by
bench/served_judges.py) where this costs well under one. Chat requests stay on litellm.

It sends what litellm 1.110.2 sent for the same request, so servers see no difference: the
handler behind `text-completion-openai/<name>` (llms/openai/completion/handler.py, through the
OpenAI SDK) posts to <base>/completions with the model name after the provider prefix, the
prompt as given, `extra_body` merged into the top level and `Authorization: Bearer <key>`.
Where the base URL and key come from when the endpoint names none is litellm's too (main.py:
hosted_vllm from HOSTED_VLLM_API_BASE / HOSTED_VLLM_API_KEY, else "fake-api-key"; openai from
OPENAI_BASE_URL / OPENAI_API_BASE / https://api.openai.com/v1 and OPENAI_API_KEY).

Failures are raised as exceptions named as litellm's, mapped from the status code as
litellm/litellm_core_utils/exception_mapping_utils.py exception_type() maps them for openai-style
providers, so the client's retry rules (model_access/served_retries.py classify by name) treat
both doors alike; each keeps the response's headers, where retry_after_s reads Retry-After."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Mapping
from typing import Any

import httpx

from diarylab.foundation.errors import LabError
from diarylab.model_access.completions import EmptyResponse

PROVIDERS = ("openai", "hosted_vllm", "text-completion-openai")
OPENAI_BASE = "https://api.openai.com/v1"


class HTTPFailure(Exception):
    """A try that failed on the wire or with an error status; the subclass name is the class."""

    def __init__(
        self, message: str, status_code: int | None = None, headers: Mapping[str, str] = {}
    ) -> None:
        super().__init__(message)
        self.status_code = status_code
        self.headers = dict(headers)


class BadRequestError(HTTPFailure): ...


class AuthenticationError(HTTPFailure): ...


class NotFoundError(HTTPFailure): ...


class RateLimitError(HTTPFailure): ...


class Timeout(HTTPFailure): ...  # noqa: A001 - litellm's name, which the retry rules read


class InternalServerError(HTTPFailure): ...


class BadGatewayError(HTTPFailure): ...


class ServiceUnavailableError(HTTPFailure): ...


class APIError(HTTPFailure): ...


class APIConnectionError(HTTPFailure): ...


# exception_mapping_utils.py, exception_type(), the openai branch: by status; 403 and anything
# else unlisted is an APIError there too.
BY_STATUS: dict[int, type[HTTPFailure]] = {
    400: BadRequestError,
    401: AuthenticationError,
    404: NotFoundError,
    408: Timeout,
    422: BadRequestError,
    429: RateLimitError,
    500: InternalServerError,
    502: BadGatewayError,
    503: ServiceUnavailableError,
    504: Timeout,
}


def route(model: str, url: str | None) -> tuple[str, str, str | None]:
    """The model name sent, the base URL and the provider's own key (None: none to add) for a
    token-prompt request to `model` at `url`; a LabError for a model with no such door."""
    provider, _, name = model.partition("/")
    if provider not in PROVIDERS or not name:
        raise LabError(
            f"{model} has no token-prompt door: token-id prompts go to an "
            "OpenAI-compatible /v1/completions endpoint",
            where=f"model {model}",
            fix="serve the model with vLLM or llama.cpp and name it hosted_vllm/<name> "
            "(or openai/<name>) with its base_url",
        )
    if provider == "hosted_vllm":
        base = url or os.environ.get("HOSTED_VLLM_API_BASE")
        if not base:
            raise LabError(
                f"{model} has no base URL",
                where=f"model {model}",
                fix="set base_url in the endpoint settings (or HOSTED_VLLM_API_BASE)",
            )
        return name, base, os.environ.get("HOSTED_VLLM_API_KEY") or "fake-api-key"
    base = (
        url or os.environ.get("OPENAI_BASE_URL") or os.environ.get("OPENAI_API_BASE") or OPENAI_BASE
    )
    return name, base, os.environ.get("OPENAI_API_KEY")


class CompletionsHTTP:
    """Pooled connections, one pool per base URL, shared by every thread of one client."""

    def __init__(self, connections: int) -> None:
        self._connections = connections
        self._pools: dict[str, httpx.Client] = {}
        self._lock = threading.Lock()

    def _pool(self, base: str) -> httpx.Client:
        pool = self._pools.get(base)
        if pool is None:
            with self._lock:
                pool = self._pools.get(base)
                if pool is None:
                    limits = httpx.Limits(
                        max_connections=self._connections,
                        max_keepalive_connections=self._connections,
                    )
                    # trust_env=False: no proxy from the environment for what is usually a
                    # server on the same network; retries are the client's own.
                    pool = httpx.Client(limits=limits, trust_env=False)
                    self._pools[base] = pool
        return pool

    def post(self, base: str, body: Mapping[str, Any], key: str | None, timeout: float) -> Any:
        """The decoded JSON answer of one POST to <base>/completions."""
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if key:
            headers["Authorization"] = f"Bearer {key}"
        data = json.dumps(body, separators=(",", ":")).encode()
        try:
            response = self._pool(base).post(
                base.rstrip("/") + "/completions", content=data, headers=headers, timeout=timeout
            )
        except httpx.TimeoutException as exc:
            raise Timeout(f"A timeout occurred after {timeout:.1f} s: {exc}") from exc
        except httpx.HTTPError as exc:
            raise APIConnectionError(f"Connection error: {type(exc).__name__}: {exc}") from exc
        status = response.status_code
        if status >= 400:
            kind = BY_STATUS.get(status, APIError)
            raise kind(f"{status} {_error_text(response.content)}", status, response.headers)
        try:
            return json.loads(response.content)
        except ValueError as exc:
            raise EmptyResponse(f"the answer is not JSON ({len(response.content)} bytes)") from exc

    def close(self) -> None:
        with self._lock:
            for pool in self._pools.values():
                pool.close()
            self._pools.clear()


def _error_text(content: bytes) -> str:
    """The server's own message (vLLM: {"error": {"message": ...}}), or the body's start."""
    try:
        body = json.loads(content)
    except ValueError:
        return content[:300].decode(errors="replace")
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict) and error.get("message"):
        return str(error["message"])
    if isinstance(body, dict) and body.get("detail"):
        return str(body["detail"])
    return json.dumps(body)[:300]
