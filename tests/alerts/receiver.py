"""Webhook receivers on loopback: one records every request (any method) and answers with
scripted status codes (the last one repeats), a body and headers of its choice, over TLS
if asked, on 127.0.0.1 or another loopback address; one answers its status line and
then trickles a byte at a time."""

from __future__ import annotations

import socket
import ssl
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from tests.loopback import serving_thread


@dataclass(frozen=True)
class Received:
    at: float  # time.monotonic() when it arrived
    headers: dict[str, str]
    body: bytes
    method: str = "POST"
    path: str = ""


class Receiver:
    def __init__(
        self,
        statuses: list[int] | None = None,
        *,
        reply: bytes | None = None,
        headers: dict[str, str] | None = None,
        tls: ssl.SSLContext | None = None,
        host: str = "127.0.0.1",
    ) -> None:
        self.statuses = list(statuses or [200])
        self.received: list[Received] = []
        self._lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                arrived = Received(
                    time.monotonic(), dict(self.headers), body, self.command, self.path
                )
                with receiver._lock:
                    receiver.received.append(arrived)
                    index = min(len(receiver.received), len(receiver.statuses)) - 1
                    status = receiver.statuses[index]
                self.send_response(status)
                self.send_header("Content-Type", "text/plain")
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                if reply is not None:
                    self.wfile.write(reply)
                else:
                    self.wfile.write(b"ok" if status < 300 else b"receiver is down")

            do_GET = do_HEAD = do_PUT = do_PATCH = do_DELETE = do_OPTIONS = do_POST

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer((host, 0), Handler)
        if tls is not None:
            self.server.socket = tls.wrap_socket(self.server.socket, server_side=True)
        self.port = self.server.server_port
        scheme = "https" if tls is not None else "http"
        self.url = f"{scheme}://{host}:{self.port}/hook"
        self.thread = serving_thread(self.server)

    def __enter__(self) -> Receiver:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()

    def wait_for(self, count: int, timeout: float = 60) -> list[Received]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if len(self.received) >= count:
                return list(self.received)
            time.sleep(0.1)
        raise AssertionError(f"expected {count} requests, got {len(self.received)}")


class TrickleReceiver:
    """Answers `HTTP/1.1 200 OK` at once, then one byte of a header that never ends
    every `interval` seconds, for as long as the client listens: the receiver that held
    a worker for a minute. Counts the requests it got (`arrivals`, monotonic times)."""

    def __init__(self, interval: float = 2.0) -> None:
        self.interval = interval
        self.arrivals: list[float] = []
        self._stop = threading.Event()
        self._sock = socket.create_server(("127.0.0.1", 0))
        self._sock.settimeout(0.2)
        self.url = f"http://127.0.0.1:{self._sock.getsockname()[1]}/hook"
        self._threads: list[threading.Thread] = []

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            thread = threading.Thread(target=self._trickle, args=(conn,), daemon=True)
            thread.start()
            self._threads.append(thread)

    def _trickle(self, conn: socket.socket) -> None:
        with conn:
            conn.settimeout(5)
            try:
                conn.recv(65536)  # the request (small: one JSON message)
                self.arrivals.append(time.monotonic())
                conn.sendall(b"HTTP/1.1 200 OK\r\nX-Slow: ")
                while not self._stop.wait(self.interval):
                    conn.sendall(b"z")
            except OSError:  # the client hung up: what it should do
                return

    def __enter__(self) -> TrickleReceiver:
        thread = threading.Thread(target=self._accept, daemon=True)
        thread.start()
        self._threads.append(thread)
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._sock.close()
        for thread in self._threads:
            thread.join(timeout=10)
