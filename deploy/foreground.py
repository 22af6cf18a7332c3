"""Run a command (`make run`'s honcho) so that one Ctrl-C is a clean stop: exit 0, not
make's "Error 130".

On a terminal, the command gets a process group of its own and the terminal's
foreground, as a shell's job control gives a job: Ctrl-C reaches the command alone, it
stops its processes, and make (which never saw the signal) finishes normally. Without a
terminal (CI, a test sending SIGINT to make's group), the command stays in this group
and gets the signal with us; we wait for it and exit 0.

    python deploy/foreground.py honcho start --procfile Procfile
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys


def _terminal() -> int | None:
    """The controlling terminal's fd, if this process is in its foreground group."""
    try:
        fd = sys.stdin.fileno()
        if os.isatty(fd) and os.tcgetpgrp(fd) == os.getpgrp():
            return fd
    except (OSError, ValueError):
        pass
    return None


def main(argv: list[str]) -> int:
    if not argv:
        print("usage: foreground.py COMMAND [ARG...]", file=sys.stderr)
        return 2
    interrupted = False

    def note(signum, frame) -> None:
        nonlocal interrupted
        interrupted = True  # the command got it too (same group): wait for it to stop

    tty = _terminal()
    if tty is None:
        signal.signal(signal.SIGINT, note)
        signal.signal(signal.SIGTERM, note)
        child = subprocess.Popen(argv)  # noqa: S603 (the Makefile's own command)
    else:
        child = subprocess.Popen(argv, process_group=0)  # noqa: S603 (as above)
        signal.signal(signal.SIGTTOU, signal.SIG_IGN)  # we hand the terminal on and back
        os.tcsetpgrp(tty, child.pid)
        signal.signal(signal.SIGTERM, lambda *_: child.send_signal(signal.SIGTERM))
    try:
        code = child.wait()
    finally:
        if tty is not None:
            os.tcsetpgrp(tty, os.getpgrp())
    # Stopped by Ctrl-C (or a SIGTERM): a clean stop. -2/-15: killed by the signal;
    # 130/143: exited with the shell's code for it.
    stopped = code in (0, -signal.SIGINT, -signal.SIGTERM, 130, 143)
    if stopped and (interrupted or tty is not None):
        return 0
    return code if code >= 0 else 128 - code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
