"""``kestrel-mcp`` typed in a terminal (the README's "then" column shows it) waited in
silence for a host's first message, which looked like a hang. Started on a terminal it
says on stderr what it is and how to stop it; started by a host (stdin a pipe) it says
nothing, its stdout and stderr as before."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest
from kestrel_mcp.cli import TERMINAL_NOTE

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="a pseudo-terminal is POSIX")

SERVE = [sys.executable, "-c", "from kestrel_mcp.cli import main; main()"]


def _read_until(fd: int, wanted: bytes, seconds: float) -> bytes:
    out, end = b"", time.monotonic() + seconds
    while wanted not in out and time.monotonic() < end:
        ready, _, _ = select.select([fd], [], [], 0.2)
        if ready:
            try:
                out += os.read(fd, 4096)
            except OSError:  # the child closed the terminal
                break
    return out


def test_started_on_a_terminal_it_says_what_it_waits_for(tmp_path: Path) -> None:
    pid, fd = pty.fork()
    if pid == 0:  # the child: kestrel-mcp on the terminal
        os.environ["KESTREL_HOME"] = str(tmp_path / "home")
        os.execv(SERVE[0], SERVE)
    try:
        said = _read_until(fd, b"Ctrl-C", 60)
        assert TERMINAL_NOTE.encode() in said.replace(b"\r\n", b"\n")
        os.write(fd, b"\x04")  # Ctrl-D: end of input ends the server
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0
    finally:
        os.close(fd)


def test_started_by_a_host_it_says_nothing_on_stderr(tmp_path: Path) -> None:
    done = subprocess.run(
        SERVE,
        input=b"",
        capture_output=True,
        env={**os.environ, "KESTREL_HOME": str(tmp_path / "home")},
        timeout=60,
        check=False,
    )
    assert done.returncode == 0
    assert done.stdout == b""
    assert done.stderr == b""
