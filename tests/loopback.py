"""A test's stand-in server on loopback, served from a thread."""

from __future__ import annotations

import socketserver
import threading

# shutdown() waits for the serve loop's next look at its flag: every test that stopped a
# stand-in waited up to socketserver's default 0.5 s for it (about 20 s of the fast loop),
# then up to 0.05 s (about 3 s: 120-odd stand-ins). Looking every 0.01 s costs no CPU
# that shows.
POLL_SECONDS = 0.01


def serving_thread(server: socketserver.BaseServer) -> threading.Thread:
    """A daemon thread that serves `server` until its shutdown() (not yet started)."""
    return threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": POLL_SECONDS}, daemon=True
    )
