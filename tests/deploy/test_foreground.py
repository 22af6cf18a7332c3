"""deploy/foreground.py: `make run` stopped by one Ctrl-C exits 0 on a terminal, and
never prints make's "Error 130" (tests/test_make_run.py runs the real `make run`)."""

from __future__ import annotations

import os
import pty
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.services import ROOT

FOREGROUND = ROOT / "deploy" / "foreground.py"
# A stand-in for honcho: waits, and exits 130 on SIGINT as honcho does.
CHILD = """
import sys, time
print("ready", flush=True)
try:
    time.sleep(60)
except KeyboardInterrupt:
    sys.exit(130)
"""


def makefile(tmp_path: Path) -> Path:
    (tmp_path / "child.py").write_text(CHILD)
    path = tmp_path / "Makefile"
    path.write_text(f"run:\n\texec {sys.executable} {FOREGROUND} {sys.executable} child.py\n")
    return path


def read_until(fd: int, text: bytes, timeout: float = 20) -> bytes:
    out, deadline = b"", time.monotonic() + timeout
    while text not in out and time.monotonic() < deadline:
        try:
            chunk = os.read(fd, 1024)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    return out


def test_ctrl_c_on_a_terminal_stops_make_run_with_exit_0(tmp_path):
    makefile(tmp_path)
    pid, fd = pty.fork()
    if pid == 0:  # the child: make, on the pty as on a terminal
        os.chdir(tmp_path)
        os.execvp("make", ["make", "--no-print-directory", "run"])
    assert b"ready" in read_until(fd, b"ready")
    os.write(fd, b"\x03")  # Ctrl-C, as typed
    out = read_until(fd, b"Error", timeout=10)
    _, status = os.waitpid(pid, 0)
    os.close(fd)
    assert os.waitstatus_to_exitcode(status) == 0, out
    assert b"Error" not in out


def test_sigint_to_makes_group_without_a_terminal_prints_no_make_error(tmp_path):
    makefile(tmp_path)
    make = subprocess.Popen(
        ["make", "--no-print-directory", "run"],
        cwd=tmp_path,
        start_new_session=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert make.stdout.readline().startswith("exec ")
    assert make.stdout.readline() == "ready\n"
    os.killpg(make.pid, signal.SIGINT)
    out = make.communicate(timeout=20)[0]
    assert "Error" not in out, out  # make itself got the signal too: it ends by it, quietly
