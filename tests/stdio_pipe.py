"""``python -m kestrel_mcp`` on a real pipe, and that server beside a real door on loopback:
the two MCP faces a test sends the same messages to (fixture ``stdio_and_door`` in
``tests/conftest.py``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tests.doors import Door, serve_door
from tests.kestrel_mcp.test_stdio import INIT

__all__ = ["Stdio", "stdio_beside_a_door"]


class Stdio:
    """``python -m kestrel_mcp`` on a pipe, one line out and one line back."""

    def __init__(self, home: Path) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "kestrel_mcp", "--home", str(home)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env={**os.environ, "HOME": str(home), "KESTREL_HOME": str(home)},
        )
        assert self.process.stdin is not None
        assert self.process.stdout is not None
        self.stdin, self.stdout = self.process.stdin, self.process.stdout

    def send(self, message: Any) -> None:
        self.stdin.write(json.dumps(message).encode() + b"\n")
        self.stdin.flush()

    def call(self, message: Any) -> dict[str, Any]:
        answer: dict[str, Any] = json.loads(self.line(message))
        return answer

    def line(self, message: Any) -> bytes:
        """The answer's line as it came on the pipe, its newline left off."""
        self.send(message)
        return self.stdout.readline().removesuffix(b"\n")

    def close(self) -> None:
        self.process.kill()
        self.process.wait(timeout=10)
        self.stdin.close()
        self.stdout.close()


@contextmanager
def stdio_beside_a_door(stdio_home: Path, door_home: Path) -> Iterator[tuple[Stdio, Door]]:
    """``kestrel-mcp`` initialized on a pipe, and ``kestrel-door serve`` on loopback."""
    stdio = Stdio(stdio_home)
    try:
        assert stdio.call(INIT)["result"]["protocolVersion"] == "2025-11-25"
        with serve_door(door_home) as door:
            yield stdio, door
    finally:
        stdio.close()
