"""One deadline for a whole exchange with a gateway (client.Gateway.exchange)."""

from __future__ import annotations

import socket
import threading


class Deadline:
    """One deadline for a whole exchange: connect, write and the read of the whole body.

    httpx's timeouts are per operation, so a gateway that trickles a byte every few
    seconds never trips one. This one shuts the exchange's socket down when its time is
    up, which ends a blocked read at once; `expired` tells the caller why it ended. The
    socket comes from httpx's trace hook as the connection opens (connect itself is
    bounded by the connect timeout, which is the same number of seconds)."""

    def __init__(self, seconds: float) -> None:
        self._lock = threading.Lock()
        self._sockets: list[socket.socket] = []
        self.expired = False
        self._timer = threading.Timer(seconds, self._expire)
        self._timer.daemon = True

    def __enter__(self) -> Deadline:
        self._timer.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._timer.cancel()

    def trace(self, event: str, info: dict) -> None:
        if event not in ("connection.connect_tcp.complete", "connection.start_tls.complete"):
            return
        stream = info.get("return_value")
        sock = stream.get_extra_info("socket") if stream is not None else None
        if sock is None:
            return
        with self._lock:
            self._sockets.append(sock)
            late = self.expired
        if late:
            _shutdown(sock)

    def _expire(self) -> None:
        with self._lock:
            self.expired = True
            sockets = list(self._sockets)
        for sock in sockets:
            _shutdown(sock)


def _shutdown(sock: socket.socket) -> None:
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:  # closed already: nothing left to cut
        pass
