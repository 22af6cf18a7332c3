"""A TCP proxy a test can cut: how a live server loses its database while the Postgres
every test shares stays up. Cut, open connections are closed and new ones refused, as
when the database server goes away; restored, it listens on the same port again."""

from __future__ import annotations

import socket
import threading


class TcpProxy:
    def __init__(self, upstream: tuple[str, int]) -> None:
        self.upstream = upstream
        self.port = 0
        self._listener: socket.socket | None = None
        self._open: set[socket.socket] = set()
        self._lock = threading.Lock()

    def start(self) -> TcpProxy:
        if self._listener is not None:  # up already
            return self
        listener = socket.socket()
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen(64)
        listener.settimeout(0.2)  # so the accept loop notices a cut
        self.port = listener.getsockname()[1]
        self._listener = listener
        threading.Thread(target=self._accept, args=(listener,), daemon=True).start()
        return self

    restore = start

    def cut(self) -> None:
        listener, self._listener = self._listener, None
        if listener is not None:
            _close(listener)  # shut down first: stops listening now, not once accept returns
        with self._lock:
            open_, self._open = self._open, set()
        for sock in open_:
            _close(sock)

    def _accept(self, listener: socket.socket) -> None:
        while self._listener is listener:
            try:
                client, _ = listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return  # closed by cut()
            try:
                server = socket.create_connection(self.upstream, timeout=5)
            except OSError:
                _close(client)
                continue
            for sock in (client, server):
                sock.settimeout(None)
            with self._lock:
                cut = self._listener is not listener
                if not cut:
                    self._open |= {client, server}
            if cut:  # while connecting upstream
                _close(client)
                _close(server)
                return
            for source, target in ((client, server), (server, client)):
                threading.Thread(target=_pump, args=(source, target), daemon=True).start()


def _pump(source: socket.socket, target: socket.socket) -> None:
    try:
        while data := source.recv(65536):
            target.sendall(data)
    except OSError:
        pass
    finally:
        _close(source)
        _close(target)


def _close(sock: socket.socket) -> None:
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    sock.close()
