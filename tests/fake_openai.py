"""A real HTTP server on loopback that speaks the OpenAI chat-completions API, for tests.

Usage::

    with FakeOpenAIServer() as server:
        server.push(ErrorReply(status=429, headers={"Retry-After": "2"}), Reply(content="hi"))
        provider = get_provider("openai/test-model", base_url=server.url)
        ...
        assert server.request_count == 2

Each POST to ``/v1/chat/completions`` (or ``/v1/messages``, answered in the Anthropic Messages
format for the ``anthropic`` provider; use :attr:`FakeOpenAIServer.anthropic_url`) takes the next behaviour from the queue (:meth:`push`);
when the queue is empty it asks ``responder(request_json)`` (default: a ``Reply`` echoing the
last user message). Behaviours:

- :class:`Reply` — a well-formed completion (content, finish_reason, token counts, delay);
- :class:`ErrorReply` — an HTTP error status with OpenAI's error JSON and extra headers;
- :class:`RawReply` — any bytes (malformed JSON, HTML, ...) with a status and content type.

Every request is logged (:attr:`requests`), with its parsed JSON body and headers. The server
binds 127.0.0.1 on a free port, serves from a background thread (one thread per request) and
stops on exit; delayed answers end early when the server stops.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Reply:
    """A successful chat completion."""

    content: str = "ok"
    finish_reason: str = "stop"
    prompt_tokens: int = 10
    completion_tokens: int = 20
    model: str | None = None
    delay: float = 0.0


@dataclass(frozen=True)
class ErrorReply:
    """An HTTP error with OpenAI's error body."""

    status: int
    message: str = "simulated error"
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0


@dataclass(frozen=True)
class RawReply:
    """Arbitrary bytes, e.g. a truncated or non-JSON body."""

    body: bytes
    status: int = 200
    content_type: str = "application/json"
    delay: float = 0.0


Behaviour = Reply | ErrorReply | RawReply
Responder = Callable[[dict[str, Any]], Behaviour]


@dataclass(frozen=True)
class LoggedRequest:
    """One request the server received (header names lower-cased)."""

    method: str
    path: str
    body: dict[str, Any] | None
    headers: dict[str, str]
    received_at: float


def echo_responder(request: dict[str, Any]) -> Behaviour:
    """Reply with the last user message, prefixed by ``echo:``."""
    users = [m.get("content", "") for m in request.get("messages", []) if m.get("role") == "user"]
    return Reply(content=f"echo: {users[-1] if users else ''}")


def completion_json(reply: Reply, request: dict[str, Any], serial: int) -> dict[str, Any]:
    """The OpenAI ``chat.completion`` object for ``reply``."""
    return {
        "id": f"chatcmpl-fake-{serial}",
        "object": "chat.completion",
        "created": 1_700_000_000 + serial,
        "model": reply.model or request.get("model", "fake-model"),
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": reply.content},
                "finish_reason": reply.finish_reason,
            }
        ],
        "usage": {
            "prompt_tokens": reply.prompt_tokens,
            "completion_tokens": reply.completion_tokens,
            "total_tokens": reply.prompt_tokens + reply.completion_tokens,
        },
    }


_ANTHROPIC_STOP = {"stop": "end_turn", "length": "max_tokens"}


def message_json(reply: Reply, request: dict[str, Any], serial: int) -> dict[str, Any]:
    """The Anthropic Messages API ``message`` object for ``reply`` (for ``POST /v1/messages``)."""
    return {
        "id": f"msg_fake_{serial}",
        "type": "message",
        "role": "assistant",
        "model": reply.model or request.get("model", "fake-model"),
        "content": [{"type": "text", "text": reply.content}],
        "stop_reason": _ANTHROPIC_STOP.get(reply.finish_reason, reply.finish_reason),
        "stop_sequence": None,
        "usage": {"input_tokens": reply.prompt_tokens, "output_tokens": reply.completion_tokens},
    }


class FakeOpenAIServer:
    """Context manager running the fake server; see the module docstring."""

    def __init__(self, responder: Responder | None = None) -> None:
        self.responder: Responder = responder or echo_responder
        self._queue: deque[Behaviour] = deque()
        self._log: list[LoggedRequest] = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _make_handler(self))
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def url(self) -> str:
        """Base URL to hand to the OpenAI SDK (``http://127.0.0.1:<port>/v1``)."""
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    @property
    def anthropic_url(self) -> str:
        """Base URL for the Anthropic SDK, which appends ``/v1/messages`` itself."""
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def push(self, *behaviours: Behaviour) -> None:
        """Queue behaviours for the next requests, in order."""
        with self._lock:
            self._queue.extend(behaviours)

    @property
    def requests(self) -> list[LoggedRequest]:
        """A copy of the request log."""
        with self._lock:
            return list(self._log)

    @property
    def request_count(self) -> int:
        """How many requests arrived so far."""
        with self._lock:
            return len(self._log)

    def _next(self, logged: LoggedRequest) -> tuple[Behaviour, int]:
        with self._lock:
            self._log.append(logged)
            serial = len(self._log)
            queued = self._queue.popleft() if self._queue else None
        return (queued or self.responder(logged.body or {})), serial

    def wait(self, seconds: float) -> None:
        """Sleep up to ``seconds``, returning early when the server stops."""
        if seconds > 0:
            self._stopping.wait(seconds)

    def __enter__(self) -> FakeOpenAIServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stopping.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)


def _make_handler(server: FakeOpenAIServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # quiet
            pass

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                body = json.loads(raw) if raw else None
            except json.JSONDecodeError:
                body = None
            logged = LoggedRequest(
                "POST",
                self.path,
                body,
                {k.lower(): v for k, v in self.headers.items()},
                time.monotonic(),
            )
            behaviour, serial = server._next(logged)
            server.wait(behaviour.delay)
            if self.path.split("?")[0].rstrip("/") not in _ROUTES:
                behaviour = ErrorReply(status=404, message=f"no route {self.path}")
            # a client that gave up (timeout) has closed the socket: nothing to answer
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                self._send(behaviour, body or {}, serial)

        def _send(self, behaviour: Behaviour, request: dict[str, Any], serial: int) -> None:
            headers: dict[str, str] = {}
            if isinstance(behaviour, Reply):
                status, ctype = 200, "application/json"
                render = _ROUTES[self.path.split("?")[0].rstrip("/")]
                data = json.dumps(render(behaviour, request, serial)).encode()
            elif isinstance(behaviour, ErrorReply):
                status, ctype, headers = behaviour.status, "application/json", behaviour.headers
                error = {"message": behaviour.message, "type": "fake_error", "code": None}
                data = json.dumps({"error": error}).encode()
            else:
                status, ctype, data = behaviour.status, behaviour.content_type, behaviour.body
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(data)))
            for name, value in headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

    return Handler


_ROUTES = {"/v1/chat/completions": completion_json, "/v1/messages": message_json}
