"""An OpenAI-compatible gateway on loopback for tests: a real HTTP server on 127.0.0.1
with replies scripted per model, recording every request it receives.

    gateway.script("google/gemini-2.5-flash-lite", completion({...}), error(503))
    ... the code under test calls POST {gateway.base_url}/chat/completions ...
    gateway.requests_for("google/gemini-2.5-flash-lite")  # what it was sent
    gateway.listed = ["google/gemini-2.5-flash-lite"]  # GET {base_url}/models answers it

A model with no reply left answers 418, a status no code path treats as retryable, so
a test that forgot to script a call fails loudly instead of failing back.
"""

from __future__ import annotations

import json
import threading
import time
from collections import defaultdict, deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.loopback import serving_thread


@dataclass(slots=True)
class Reply:
    status: int = 200
    body: Any = None  # a dict is sent as JSON, a str as is
    delay: float = 0.0  # seconds before answering
    served_as: str | None = None  # the reply's "model"; default: the model requested
    trickle: float = 0.0  # seconds between the body's bytes (headers go at once)
    # Set: the reply waits for it (at most `delay`), so a test lets it go once it has
    # seen what it watches for, instead of waiting out a fixed delay.
    held: threading.Event | None = None


@dataclass(slots=True)
class Request:
    path: str
    headers: dict[str, str]
    body: dict
    raw: str

    @property
    def model(self) -> str:
        return self.body.get("model", "")

    @property
    def messages(self) -> list[dict]:
        return self.body.get("messages", [])


def completion(
    content: Any,
    *,
    prompt_tokens: int = 100,
    completion_tokens: int = 20,
    cached_tokens: int = 0,
    served_as: str | None = None,
    delay: float = 0.0,
    cost: Any = None,
    held: threading.Event | None = None,
) -> Reply:
    """A chat completion whose message is `content` (a dict is sent as its JSON text);
    `cost`, if given, is sent as OpenRouter's `usage.cost` (USD); `held`: as Reply's."""
    text = content if isinstance(content, str) else json.dumps(content)
    body = {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
            "prompt_tokens_details": {"cached_tokens": cached_tokens},
        },
    }
    if cost is not None:
        body["usage"]["cost"] = cost
    return Reply(200, body, delay, served_as, held=held)


def trickling(content: Any, every: float) -> Reply:
    """A completion whose body comes one byte every `every` seconds: each read gets a
    byte well within any per-read timeout, so only a deadline on the whole call ends it."""
    reply = completion(content)
    reply.trickle = every
    return reply


def error(status: int, message: str = "", *, delay: float = 0.0) -> Reply:
    body = {"error": {"message": message or f"fake error {status}", "code": status}}
    return Reply(status, body, delay)


def raw_error(status: int, body: Any) -> Reply:
    """An error with a gateway's own body, exactly as given (a dict, list or text)."""
    return Reply(status, body if isinstance(body, str) else json.dumps(body))


@dataclass
class FakeGateway:
    replies: dict[str, deque[Reply]] = field(default_factory=lambda: defaultdict(deque))
    requests: list[Request] = field(default_factory=list)
    listed: list[str] | None = None  # GET /models: these ids; None: 404, no list

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._server.daemon_threads = True
        self._server.block_on_close = False  # a test's slow reply must not delay the stop
        self._thread = serving_thread(self._server)

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def start(self) -> FakeGateway:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def script(self, model: str, *replies: Reply) -> None:
        with self._lock:
            self.replies[model].extend(replies)

    def requests_for(self, model: str) -> list[Request]:
        with self._lock:
            return [r for r in self.requests if r.model == model]

    def _next(self, request: Request) -> Reply:
        with self._lock:
            self.requests.append(request)
            queue = self.replies.get(request.model)
            if queue:
                return queue.popleft()
        return error(418, f"fake gateway: no reply scripted for {request.model!r}")


def _handler(gateway: FakeGateway) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
            if not self.path.endswith("/models") or gateway.listed is None:
                self._send(Reply(404, {"error": {"message": "not found"}}), "")
                return
            data = [{"id": model, "object": "model"} for model in gateway.listed]
            self._send(Reply(200, {"object": "list", "data": data}), "")

        def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0)).decode()
            if not self.path.endswith("/chat/completions"):
                self._send(Reply(404, {"error": {"message": "not found"}}), "")
                return
            try:
                body = json.loads(raw)
            except ValueError:
                body = {}
            request = Request(self.path, dict(self.headers.items()), body, raw)
            self._send(gateway._next(request), request.model)

        def _send(self, reply: Reply, model: str) -> None:
            if reply.held is not None:
                reply.held.wait(reply.delay)
            elif reply.delay:
                time.sleep(reply.delay)
            body = reply.body
            if isinstance(body, dict) and "choices" in body:
                body = {**body, "model": reply.served_as or model}
            data = (body if isinstance(body, str) else json.dumps(body or {})).encode()
            try:
                self.send_response(reply.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                if reply.trickle:
                    for i in range(len(data)):
                        self.wfile.write(data[i : i + 1])
                        self.wfile.flush()
                        time.sleep(reply.trickle)
                else:
                    self.wfile.write(data)
            except OSError:  # BrokenPipe, ConnectionReset
                pass  # the client gave up (a timeout test): nothing to answer

        def log_message(self, format: str, *args: Any) -> None:
            pass  # keep test output clean

    return Handler
