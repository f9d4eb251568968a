"""``serve_stdio``: the MCP stdio transport, one JSON-RPC message per line.

stdout carries protocol and nothing else: while serving, file descriptor 1 is
pointed at stderr and the protocol writes to a private duplicate, so a stray
``print`` or a C library writing to fd 1 can never corrupt a frame. Requests are
answered concurrently, each response written whole. A line longer than 16 MiB is
answered with a parse error and skipped; the server keeps going. EOF or SIGTERM
ends the loop cleanly within a second.

While a client answers as fast as it is served, the server polls stdin for up to
``spin`` seconds after a response before it sleeps (adaptive, and never while another
request is in flight): :mod:`kestrel_mcp.stdio_io` says why and how. ``spin=0`` turns it
off.
"""

from __future__ import annotations

import logging
import os
import signal
import sys
import threading
from typing import Final

import anyio
from anyio.abc import TaskGroup
from kestrel_protocol.mcp import REQUEST_CANCELLED

from .server import KestrelMcpServer
from .stdio_io import Lines, Reader, Writer

__all__ = ["SPIN_SECONDS", "serve_stdio"]

logger = logging.getLogger("kestrel_mcp.stdio")

_EOF_GRACE_SECONDS: Final = 0.5
SPIN_SECONDS: Final = 0.001
"""How long the server polls for the next request before it sleeps (the default)."""


class _Workers:
    """Answers lines concurrently, with no hand-over between tasks for a call that never
    waits.

    One worker at a time holds the reader role: it reads a line, gives the role up and
    answers that line itself. A call that never waits (most of them) is answered before
    anything else can run, so the same worker goes on to read the next line: one task,
    no hand-over. A call that waits lets other work run; input that arrives meanwhile
    finds nobody reading and starts a worker (the reader says so), and lines already
    buffered start one at once, so pings, cancellations and other requests still get
    through. A worker that finds the role taken when it is done ends. Where the reader
    cannot say that input arrived (no asyncio fd watch), every line starts the next
    reader before it is answered.
    """

    def __init__(
        self, server: KestrelMcpServer, lines: Lines, reader: Reader, writer: Writer
    ) -> None:
        self._server = server
        self._lines = lines
        self._reader = reader
        self._writer = writer
        self._group: TaskGroup | None = None
        self._reading = False
        self._starting = False
        self._answering = 0
        self.eof = anyio.Event()
        reader.on_unclaimed = self._unclaimed
        reader.may_spin = self._idle

    def start(self, group: TaskGroup) -> None:
        self._group = group
        self._spawn()

    def _spawn(self) -> None:
        if not self._starting and self._group is not None:
            self._starting = True
            self._group.start_soon(self._work)

    def _idle(self) -> bool:
        """Whether no request is being answered (the reader may spin)."""
        return not self._answering

    def _unclaimed(self) -> None:
        """Input arrived while no worker reads: start one."""
        if not self._reading and not self.eof.is_set():
            self._spawn()

    async def _work(self) -> None:
        self._starting = False
        while not self._reading:
            self._reading = True
            try:
                line = await self._lines.next()
            finally:
                self._reading = False
            if line is None:
                self.eof.set()
                return
            if not self._reader.notifies or self._lines.buffered:
                self._spawn()
            self._answering += 1
            try:
                await _answer(self._server, line, self._writer)
            finally:
                self._answering -= 1


async def _answer(server: KestrelMcpServer, line: bytes, writer: Writer) -> None:
    response = await server.handle_frame(line, writer.send)
    if response is None:
        return
    error = response.get("error")
    if isinstance(error, dict) and error.get("code") == REQUEST_CANCELLED:
        return  # the client cancelled it: MCP says no response
    writer.write(response)


async def _serve(server: KestrelMcpServer, in_fd: int, out_fd: int, spin: float) -> None:
    reader, writer = Reader(in_fd, spin), Writer(out_fd)
    try:
        await _serve_with(server, reader, writer)
    finally:
        reader.close()


async def _serve_with(server: KestrelMcpServer, reader: Reader, writer: Writer) -> None:
    async with anyio.create_task_group() as outer:
        writer.on_gone = outer.cancel_scope.cancel

        async def on_signal() -> None:
            with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
                async for signum in signals:
                    logger.info("received signal %d, shutting down", signum)
                    outer.cancel_scope.cancel()
                    return

        if sys.platform != "win32" and threading.current_thread() is threading.main_thread():
            outer.start_soon(on_signal)
        async with anyio.create_task_group() as requests:
            workers = _Workers(server, Lines(reader, writer), reader, writer)
            workers.start(requests)
            await workers.eof.wait()
            # EOF: give in-flight requests a moment, then stop them.
            requests.cancel_scope.deadline = anyio.current_time() + _EOF_GRACE_SECONDS
        outer.cancel_scope.cancel()


async def serve_stdio(
    server: KestrelMcpServer,
    *,
    stdin_fd: int | None = None,
    stdout_fd: int | None = None,
    spin: float = SPIN_SECONDS,
) -> None:
    """Serve ``server`` on stdin/stdout until EOF or SIGTERM, then close its SDK.

    With the default descriptors, fd 1 is redirected to stderr for the duration so
    that nothing but protocol can reach the client's pipe. ``spin``: how long to poll
    for the next request before sleeping, in seconds (``0``: never poll; see above).
    """
    in_fd = sys.stdin.fileno() if stdin_fd is None else stdin_fd
    guard = stdout_fd is None
    saved_stdout = None
    if guard:
        sys.stdout.flush()
        out_fd = os.dup(1)
        try:
            os.dup2(2, 1)
        except OSError:  # no usable stderr: keep fd 1, the print guard below still holds
            logger.debug("could not point fd 1 at stderr")
        saved_stdout = sys.stdout
        sys.stdout = sys.stderr
    else:
        assert stdout_fd is not None
        out_fd = stdout_fd
    try:
        await _serve(server, in_fd, out_fd, spin)
    finally:
        with anyio.CancelScope(shield=True):
            try:
                await server.transport.aclose()
            except Exception:
                logger.exception("closing the SDK failed")
        if guard:
            sys.stdout = saved_stdout
            os.dup2(out_fd, 1)
            os.close(out_fd)
