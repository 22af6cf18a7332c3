"""One POST to a checked address, within one deadline for all of it.

httpcore sends the request (the URL keeps its host name, so the Host header, TLS's SNI
and the certificate check are the name's) through a network backend that connects to
the address destinations.pin() checked, never to a fresh resolution of the name. That
backend gives every connect, TLS handshake, write and read only the time left until the
attempt's deadline, and a timer shuts the socket at the deadline in any case: a
receiver that trickles one byte every few seconds cannot hold the attempt longer.
Redirects are answers like any other, never followed (httpcore has no redirects to
follow, and the backend could reach no other address anyway). The answer names the
address the socket connected to, for the attempt's record. Of the response, only a short
printable excerpt of a failure's body is kept (excerpt())."""

from __future__ import annotations

import contextlib
import dataclasses
import socket
import ssl
import threading
import time
import typing
from dataclasses import dataclass

import httpcore
import httpx

from alerts.destinations import Destination

EXCERPT_CHARS = 200  # of a failed answer's body, kept on its attempt; never more
_READ_FOR_EXCERPT = 2048  # bytes read from a failed answer's body, at most


@dataclass(frozen=True, slots=True)
class Answer:
    code: int | None  # the receiver's status, None if none came
    error: str = ""  # what went wrong, in our words
    excerpt: str = ""  # the start of a failed answer's body, sanitised
    address: str = ""  # the address connected to; "" if no connection was made

    @property
    def ok(self) -> bool:
        return self.code is not None and 200 <= self.code < 300 and not self.error


def excerpt(data: bytes, limit: int = EXCERPT_CHARS) -> str:
    """At most `limit` printable characters of `data`: control characters and
    undecodable bytes become spaces, runs of whitespace one space."""
    text = data.decode("utf-8", errors="replace").replace("\ufffd", " ")
    text = "".join(c if c.isprintable() else " " for c in text)
    return " ".join(text.split())[:limit]


class _Deadline:
    def __init__(self, seconds: float, started: float) -> None:
        self.seconds = seconds
        self.at = started + seconds
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self._timer = threading.Timer(max(0.0, self.at - time.monotonic()), self.expire)
        self._timer.daemon = True
        self.expired = False

    def left(self, timeout: float | None) -> float:
        left = self.at - time.monotonic()
        if left <= 0:
            raise httpcore.ReadTimeout(f"the deadline of {self.seconds:g} s passed")
        return left if timeout is None else min(timeout, left)

    def watch(self, sock: socket.socket | None) -> None:
        if sock is not None:
            with self._lock:
                self._sockets.append(sock)

    def expire(self) -> None:
        """Shut every socket of the attempt: a blocked read or write returns at once."""
        with self._lock:
            self.expired = True
            for sock in self._sockets:
                with contextlib.suppress(OSError, ValueError):
                    sock.shutdown(socket.SHUT_RDWR)

    def __enter__(self) -> _Deadline:
        self._timer.start()
        return self

    def __exit__(self, *exc) -> None:
        self._timer.cancel()


class _Stream(httpcore.NetworkStream):
    def __init__(self, inner: httpcore.NetworkStream, deadline: _Deadline) -> None:
        self._inner = inner
        self._deadline = deadline
        deadline.watch(inner.get_extra_info("socket"))

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._inner.read(max_bytes, self._deadline.left(timeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, self._deadline.left(timeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.NetworkStream:
        tls = self._inner.start_tls(ssl_context, server_hostname, self._deadline.left(timeout))
        return _Stream(tls, self._deadline)

    def get_extra_info(self, info: str) -> typing.Any:
        return self._inner.get_extra_info(info)


class _PinnedBackend(httpcore.NetworkBackend):
    """Connects to one address, whatever host the URL names."""

    def __init__(self, address: str, deadline: _Deadline) -> None:
        self._inner = httpcore.SyncBackend()
        self._address = address
        self._deadline = deadline
        self.connected = ""  # the peer's address, once a connection is made

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: typing.Iterable | None = None,
    ) -> httpcore.NetworkStream:
        stream = self._inner.connect_tcp(
            self._address,
            port,
            timeout=self._deadline.left(timeout),
            local_address=local_address,
            socket_options=socket_options,
        )
        peer = stream.get_extra_info("server_addr")
        self.connected = str(peer[0]) if peer else self._address
        return _Stream(stream, self._deadline)

    def connect_unix_socket(self, path: str, timeout=None, socket_options=None):
        raise httpcore.ConnectError("webhooks do not use unix sockets")

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds)


def post(
    destination: Destination,
    address: str,
    body: bytes,
    headers: dict[str, str],
    *,
    deadline_seconds: float,
    started: float | None = None,
    ssl_context: ssl.SSLContext | None = None,
) -> Answer:
    """POST `body` to `destination` at `address`; all of it within `deadline_seconds` of
    `started` (time.monotonic(); default now: the attempt may have resolved a name).
    `ssl_context`: the certificate authorities to trust (default: httpcore's, certifi).
    Never raises for the receiver's faults."""
    try:  # the URL as sent: an international name in its IDNA (ASCII) form
        url = httpx.URL(destination.url)
        target = httpcore.URL(
            scheme=url.raw_scheme, host=url.raw_host, port=url.port, target=url.raw_path
        )
    except (httpx.InvalidURL, ValueError, UnicodeError) as error:
        return Answer(None, error=f"not a URL to send to: {error}"[:EXCERPT_CHARS])
    sent_headers = [("Host", url.netloc.decode("ascii")), *headers.items()]
    sent_headers.append(("Content-Length", str(len(body))))
    began = time.monotonic() if started is None else started
    with _Deadline(deadline_seconds, began) as deadline:
        backend = _PinnedBackend(address, deadline)
        answer = _send(backend, deadline, target, sent_headers, body, ssl_context)
    return dataclasses.replace(answer, address=backend.connected)


def _send(
    backend: _PinnedBackend,
    deadline: _Deadline,
    target: httpcore.URL,
    headers: list[tuple[str, str]],
    body: bytes,
    ssl_context: ssl.SSLContext | None,
) -> Answer:
    code = None
    pool = httpcore.ConnectionPool(
        network_backend=backend, ssl_context=ssl_context, retries=0, max_connections=1
    )
    try:
        with pool:
            with pool.stream(
                "POST",
                target,
                headers=headers,
                content=body,
                extensions={"timeout": {"connect": deadline.left(None)}},
            ) as response:
                code = response.status
                if 200 <= code < 300:
                    return Answer(code)
                received = bytearray()
                for chunk in response.iter_stream():
                    received += chunk
                    if len(received) >= _READ_FOR_EXCERPT:
                        break
                return Answer(code, excerpt=excerpt(bytes(received)))
    except (httpcore.TimeoutException, httpcore.NetworkError, httpcore.ProtocolError) as error:
        if deadline.expired or time.monotonic() >= deadline.at:
            what = f"no complete answer within the deadline of {deadline.seconds:g} s"
            return Answer(code, error=what)
        return Answer(code, error=f"{type(error).__name__}: {error}"[:EXCERPT_CHARS])
    except (httpcore.UnsupportedProtocol, OSError) as error:
        return Answer(code, error=f"{type(error).__name__}: {error}"[:EXCERPT_CHARS])
