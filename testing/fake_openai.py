"""A local stand-in for an OpenAI-compatible server (like vLLM) on loopback, so the real HTTP,
litellm and parsing code runs in tests. Behaviour is a plain function: request JSON in,
(status, response JSON) out, or (status, response JSON, extra response headers) for a server that
sends headers such as Retry-After; every request is recorded with its path. A `Routed` handler is
also told the path, so one stand-in answers /v1/chat/completions and /v1/completions, and may
answer GET requests too (`get`: path in, reply out; recorded apart, in `gets`)."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Reply = tuple[int, dict[str, Any]] | tuple[int, dict[str, Any], dict[str, str]]
Handler = Callable[[dict[str, Any]], Reply]

CHAT_PATH = "/v1/chat/completions"


@dataclass(frozen=True)
class Routed:
    """A handler that is told the request path. Called with the body alone (as wrappers that
    only know `Handler` do) it answers as the chat endpoint, so old call sites keep working."""

    answer: Callable[[str, dict[str, Any]], Reply]
    get: Callable[[str], Reply] | None = None

    def __call__(self, body: dict[str, Any]) -> Reply:
        return self.answer(CHAT_PATH, body)


def chat_response(
    text: str | None,
    *,
    model: str = "fake",
    finish_reason: str = "stop",
    logprobs: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """An OpenAI chat-completions body; `logprobs` is the list under choices[0].logprobs.content."""
    choice: dict[str, Any] = {
        "index": 0,
        "message": {"role": "assistant", "content": text},
        "finish_reason": finish_reason,
    }
    if logprobs is not None:
        choice["logprobs"] = {"content": logprobs}
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [choice],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }


@dataclass
class FakeServer:
    handler: Handler
    requests: list[dict[str, Any]] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    gets: list[str] = field(default_factory=list)
    port: int = 0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"


class _Server(ThreadingHTTPServer):
    # Real servers (uvicorn under vLLM: backlog 2048) queue far more than socketserver's 5
    # pending connections; with 5, many clients at once on a busy machine are reset, and a test
    # of concurrency would test the backlog instead.
    request_queue_size = 128

    def handle_error(self, request: object, client_address: object) -> None:
        # A client that went away mid-request (a run killed on purpose) is what uvicorn logs as
        # one line, not a traceback; anything else is still printed.
        import sys

        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)  # type: ignore[arg-type]


@contextmanager
def serve(
    handler: Handler, *, keep_alive: bool = False, record: bool = True
) -> Iterator[FakeServer]:
    """keep_alive: answer in HTTP/1.1 and keep connections open, as vLLM's uvicorn server does
    (every answer here carries its Content-Length, which HTTP/1.1 needs); the default, HTTP/1.0,
    closes each connection after one answer. record=False keeps no request (a paper-size
    rehearsal's tens of thousands of bodies would otherwise fill the stand-in's memory)."""
    state = FakeServer(handler)

    class _Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1" if keep_alive else "HTTP/1.0"
        # TCP_NODELAY on each connection, as vLLM's uvicorn has it: asyncio sets it on every
        # TCP transport (asyncio/selector_events.py, _SelectorSocketTransport.__init__ calls
        # base_events._set_nodelay). Without it an answer's body waits on the client's delayed
        # ACK of its headers: 40 ms a request.
        disable_nagle_algorithm = True

        def do_POST(self) -> None:  # noqa: N802 - http.server's naming
            length = int(self.headers.get("Content-Length", 0))
            body = json.loads(self.rfile.read(length) or b"{}")
            if record:
                state.requests.append(body)
                state.paths.append(self.path)
                state.headers.append(dict(self.headers))
            handler = state.handler
            reply = (
                handler.answer(self.path, body) if isinstance(handler, Routed) else handler(body)
            )
            self._send(reply)

        def do_GET(self) -> None:  # noqa: N802 - http.server's naming
            state.gets.append(self.path)
            handler = state.handler
            get = handler.get if isinstance(handler, Routed) else None
            self._send(get(self.path) if get is not None else (404, {"detail": "Not Found"}))

        def _send(self, reply: Reply) -> None:
            status, payload, *rest = reply
            extra: dict[str, str] = rest[0] if rest else {}
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for name, value in extra.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: Any) -> None:
            pass

    server = _Server(("127.0.0.1", 0), _Handler)
    state.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()


def closed_port_url() -> str:
    """An address on loopback where nothing listens: a server that is down."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"
