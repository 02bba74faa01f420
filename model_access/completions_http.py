"""The lean transport of token-prompt `/v1/completions` requests: one POST of JSON over a pooled,
kept-alive connection per replica, instead of litellm's text_completion(), which costs ~70 ms of
client CPU per request (its logging, cost and response-model machinery; measured by
bench/served_judges.py). The connections are the standard library's http.client: httpx, used
before, cost about 1 ms of client CPU per request in its request and response models (timed per
request in the paper-size rehearsal, docs/scaling.md), where this costs about a tenth of that.
Chat requests stay on litellm.

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

import http.client
import json
import os
import socket
import threading
from collections.abc import Mapping
from typing import Any
from urllib.parse import SplitResult, urlsplit

import orjson

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
    """Kept-alive connections, at most `connections` per base URL, shared by every thread of one
    client: a thread takes an idle connection (or opens one), sends, reads the whole answer and
    gives the connection back unless the server said it closes it."""

    def __init__(self, connections: int) -> None:
        self._connections = connections
        self._idle: dict[str, list[http.client.HTTPConnection]] = {}
        self._slots: dict[str, threading.BoundedSemaphore] = {}
        self._lock = threading.Lock()

    def post(self, base: str, body: Mapping[str, Any], key: str | None, timeout: float) -> Any:
        """The decoded JSON answer of one POST to <base>/completions."""
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if key:
            headers["Authorization"] = f"Bearer {key}"
        data = orjson.dumps(body)
        target = urlsplit(base.rstrip("/") + "/completions")
        path = target.path + (f"?{target.query}" if target.query else "")
        with self._slot(base):
            status, reason, answer_headers, content = self._exchange(
                base, target, path, data, headers, timeout
            )
        if status >= 400:
            kind = BY_STATUS.get(status, APIError)
            raise kind(f"{status} {_error_text(content) or reason}", status, answer_headers)
        return decode(content)

    def _exchange(
        self,
        base: str,
        target: SplitResult,
        path: str,
        data: bytes,
        headers: dict[str, str],
        timeout: float,
    ) -> tuple[int, str, dict[str, str], bytes]:
        """One request and its whole answer. A kept-alive connection the server has closed
        meanwhile fails before any answer arrives; the request then goes once more on a new
        connection (as httpcore does with a connection found closed), since reading a judge
        changes nothing on the server."""
        for attempt in (0, 1):
            connection, reused = self._take(base, target, timeout)
            try:
                connection.request("POST", path, body=data, headers=headers)
                response = connection.getresponse()
                content = response.read()
            except TimeoutError as exc:
                connection.close()
                raise Timeout(f"A timeout occurred after {timeout:.1f} s: {exc}") from exc
            except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError) as exc:
                connection.close()
                if reused and attempt == 0:
                    continue
                raise APIConnectionError(f"Connection error: {type(exc).__name__}: {exc}") from exc
            except (OSError, http.client.HTTPException) as exc:
                connection.close()
                raise APIConnectionError(f"Connection error: {type(exc).__name__}: {exc}") from exc
            answer_headers = {k.lower(): v for k, v in response.getheaders()}
            if response.will_close:
                connection.close()
            else:
                with self._lock:
                    self._idle.setdefault(base, []).append(connection)
            return response.status, response.reason, answer_headers, content
        raise AssertionError("unreachable")

    def _slot(self, base: str) -> threading.BoundedSemaphore:
        with self._lock:
            slot = self._slots.get(base)
            if slot is None:
                slot = self._slots[base] = threading.BoundedSemaphore(self._connections)
        return slot

    def _take(
        self, base: str, target: SplitResult, timeout: float
    ) -> tuple[http.client.HTTPConnection, bool]:
        with self._lock:
            idle = self._idle.get(base)
            if idle:
                connection = idle.pop()
                connection.timeout = timeout
                if connection.sock is not None:
                    connection.sock.settimeout(timeout)
                return connection, True
        host, port = target.hostname or "", target.port
        if target.scheme == "https":
            return _HTTPSConnection(host, port, timeout=timeout), False
        return _HTTPConnection(host, port, timeout=timeout), False

    def close(self) -> None:
        with self._lock:
            for idle in self._idle.values():
                for connection in idle:
                    connection.close()
            self._idle.clear()


class _NoDelay:
    """TCP_NODELAY on connect: http.client sends a body over 2,000 bytes apart from its headers,
    and without it Nagle's algorithm holds the body back until the server's delayed ACK of the
    headers: 40 ms a request (measured against the judge stand-in, one reading at a time)."""

    sock: socket.socket

    def connect(self) -> None:
        super().connect()  # type: ignore[misc]
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


class _HTTPConnection(_NoDelay, http.client.HTTPConnection): ...


class _HTTPSConnection(_NoDelay, http.client.HTTPSConnection): ...


def decode(content: bytes) -> Any:
    """An answer's JSON. orjson reads standard JSON only; the standard library also reads the
    NaN and Infinity some servers write, so what orjson refuses is read by it instead."""
    try:
        return orjson.loads(content)
    except orjson.JSONDecodeError:
        pass
    try:
        return json.loads(content)
    except ValueError as exc:
        raise EmptyResponse(f"the answer is not JSON ({len(content)} bytes)") from exc


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
