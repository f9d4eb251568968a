"""The stdio transport's bytes: stdin read and split into lines, frames written whole.

:class:`Reader` reads stdin, :class:`Lines` splits what it reads into messages (a line
longer than ``MAX_LINE_BYTES``, 16 MiB, is answered with a parse error and skipped) and
:class:`Writer` writes each response whole, in order, to the protocol's descriptor.

While a client answers as fast as it is served (an agent stepping a session in a
loop), the server does not go to sleep between its requests: for up to ``spin``
seconds after a response it polls stdin without blocking (``select.poll``), the way
an adaptive lock spins before it parks. A process that sleeps between requests pays
for it on every one: on a virtual machine the CPU idles, and the work after the wake-up
runs on cold caches (the same step took 50 us back to back and 108 us with a 100 us
pause before each, here). Spinning is adaptive and yields: it starts only when the
previous request came within the window, stops once one does not (an agent that
thinks for seconds between calls costs no CPU), never runs while another request is
in flight, and lets the event loop run at least every ``_YIELD_SECONDS``. ``spin=0``
turns it off.
"""

from __future__ import annotations

import asyncio
import logging
import os
import select
from collections import deque
from collections.abc import Callable
from time import perf_counter
from typing import Any, Final

import anyio
import anyio.lowlevel
from kestrel_protocol.jsonrpc import PARSE_ERROR, error_response
from kestrel_protocol.surface import frame_bytes

__all__ = ["MAX_LINE_BYTES", "Lines", "Reader", "Writer"]

logger = logging.getLogger("kestrel_mcp.stdio")  # one logger for the whole stdio transport

MAX_LINE_BYTES: Final = 16 * 1024 * 1024
_READ_CHUNK: Final = 1 << 16
_READ_AHEAD: Final = 16
"""Chunks read ahead of the workers before the watch on stdin pauses."""
_YIELD_SECONDS: Final = 0.002
"""The longest a spinning reader goes without letting the event loop run."""


class Writer:
    """Writes whole frames to one file descriptor, in order, never interleaved.

    When the client has gone away (its end of the pipe is closed) the writer says so
    once on stderr, drops further frames and asks the loop to stop.
    """

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self.gone = False
        self.on_gone: Callable[[], None] = lambda: None

    async def send(self, notification: dict[str, Any]) -> None:
        """A request's notification (progress, a log message), written at once."""
        self.write(notification)

    def write(self, message: dict[str, Any]) -> None:
        if self.gone:
            return
        frame = frame_bytes(message, b"\n")  # spliced, never re-encoded
        # Synchronous on purpose: a frame is written whole before any other task runs,
        # so concurrent responses can never interleave.
        try:
            written = os.write(self._fd, frame)
            if written < len(frame):  # the pipe took a part (a signal came): the rest
                view = memoryview(frame)[written:]
                while view:
                    view = view[os.write(self._fd, view) :]
        except (BrokenPipeError, ConnectionResetError):
            self.gone = True
            logger.info("the client closed its end of stdout; stopping")
            self.on_gone()


class Reader:
    """Reads stdin without a thread, and on asyncio without re-arming per line.

    On asyncio the descriptor is watched for as long as the server reads (one
    registration, not one per line: arming and disarming the watch was a third of a
    round trip's cost); chunks read while no one is waiting are kept, at most
    ``_READ_AHEAD`` of them, before the watch pauses (back-pressure on the client).
    Elsewhere each read waits for readiness; a descriptor that cannot be polled (a
    regular file) is read in a worker thread.
    """

    def __init__(self, fd: int, spin: float = 0.0) -> None:
        self._fd = fd
        self._pollable = True
        self._loop: asyncio.AbstractEventLoop | None = None
        self._watching = False
        self._chunks: deque[bytes] = deque()
        self._waiter: asyncio.Future[None] | None = None
        self._eof = False
        self.notifies = False
        """Whether input arriving while nobody reads calls :attr:`on_unclaimed`."""
        self.on_unclaimed: Callable[[], None] = lambda: None
        self._spin = max(0.0, spin)
        self._poller: select.poll | None = None
        self._hot = True
        """Whether the last input came within the spin window (so spinning pays)."""
        self._yielded = perf_counter()
        self.may_spin: Callable[[], bool] = lambda: True
        """Whether nothing else waits for the event loop (no other request in flight)."""

    async def read(self) -> bytes:
        """The next chunk; ``b""`` at EOF (and on every read after it)."""
        chunks = self._chunks
        while not chunks:  # each turn waits for input, or reads it: then the chunk is taken
            if self._eof:
                return b""
            if not self._watching and not (self._pollable and self._watch()):
                return await self._read_unwatched()
            if self._hot and self._poller is not None and self.may_spin():
                now = perf_counter()
                if now - self._yielded >= _YIELD_SECONDS:
                    self._yielded = now
                    await anyio.lowlevel.checkpoint()  # signals, timers, other tasks
                    continue
                if self._spun(self._poller, now + self._spin):
                    continue
            loop = self._loop
            assert loop is not None
            waiter = self._waiter = loop.create_future()
            waited = perf_counter()
            try:
                await waiter
            finally:
                self._waiter = None
                self._yielded = now = perf_counter()
                self._hot = now - waited <= self._spin
        chunk = chunks.popleft()
        if not self._watching:
            self._resume()
        return chunk

    async def _read_unwatched(self) -> bytes:
        """A read where the descriptor is not watched: wait for readiness, or read in a
        worker thread (a regular file, a loop without fd readiness)."""
        if self._pollable:
            try:
                await anyio.wait_readable(self._fd)
            except (OSError, ValueError, NotImplementedError, PermissionError):
                self._pollable = False  # a regular file, or a loop without fd readiness
        if not self._pollable:
            return await anyio.to_thread.run_sync(
                os.read, self._fd, _READ_CHUNK, abandon_on_cancel=True
            )
        return os.read(self._fd, _READ_CHUNK)

    def _spun(self, poller: select.poll, deadline: float) -> bool:
        """Poll for input without blocking until ``deadline``: whether it came (read into
        the chunks, or EOF). When it did not, spinning stops until input comes soon
        after a wait again."""
        while not poller.poll(0):
            if perf_counter() >= deadline:
                self._hot = False
                return False
        self._take()
        return bool(self._chunks) or self._eof

    def close(self) -> None:
        """Stop watching the descriptor (idempotent)."""
        if self._watching and self._loop is not None:
            self._loop.remove_reader(self._fd)
        self._watching = False

    def _watch(self) -> bool:
        """Whether the descriptor is watched by the running asyncio loop (started now if
        need be); ``False`` off asyncio or where the descriptor cannot be watched."""
        if self._watching:
            return True
        if self._loop is None:
            try:
                self._loop = asyncio.get_running_loop()
            except RuntimeError:  # not asyncio (trio): wait for readiness per read
                return False
        try:
            self._loop.add_reader(self._fd, self._readable)
        except (OSError, ValueError, NotImplementedError, PermissionError):
            self._pollable = False  # a regular file, or a loop without fd readiness
            return False
        self._watching = self.notifies = True
        if self._spin and self._poller is None and hasattr(select, "poll"):
            self._poller = select.poll()
            self._poller.register(self._fd, select.POLLIN)
        return True

    @property
    def buffered(self) -> bool:
        """Whether chunks already read wait to be taken."""
        return bool(self._chunks)

    def _readable(self) -> None:
        """The loop's callback: the descriptor was readable when the loop looked."""
        if self._poller is not None and not self._poller.poll(0):
            # The loop found the descriptor readable and queued this call, then a spin
            # read the input first: reading now would block the whole loop.
            return
        self._take()

    def _take(self) -> None:
        """Read one chunk from the readable descriptor (or EOF) and wake the reader."""
        try:
            chunk = os.read(self._fd, _READ_CHUNK)
        except BlockingIOError:
            return  # someone else read it first
        except OSError:
            logger.exception("reading stdin failed; treating it as EOF")
            chunk = b""
        if chunk:
            self._chunks.append(chunk)
            if len(self._chunks) >= _READ_AHEAD:
                self.close()  # resumed when the chunks are taken
        else:
            self._eof = True
            self.close()
        waiter = self._waiter
        if waiter is None:
            self.on_unclaimed()
        elif not waiter.done():
            waiter.set_result(None)

    def _resume(self) -> None:
        paused = not self._watching and not self._eof and self._loop is not None
        if paused and self._pollable and len(self._chunks) < _READ_AHEAD:
            self._watch()


class Lines:
    """Complete lines, one per :meth:`next`; blank lines are skipped and an over-long one
    is answered with -32700 and skipped. ``None`` at EOF, and on every call after it."""

    def __init__(self, reader: Reader, writer: Writer) -> None:
        self._reader = reader
        self._writer = writer
        self._buffer = bytearray()
        self._skipping = False
        self._ready: deque[bytes] = deque()
        self._eof = False

    @property
    def buffered(self) -> bool:
        """Whether input already read waits to be taken (a line, or a chunk to split)."""
        return bool(self._ready) or self._reader.buffered

    async def next(self) -> bytes | None:
        while not self._ready:
            if self._eof:
                return None
            chunk = await self._reader.read()
            if chunk:
                self._split(chunk)
            else:
                self._eof = True
                if not self._skipping:
                    self._complete()
        return self._ready.popleft()

    def _split(self, chunk: bytes) -> None:
        start = 0
        while True:
            newline = chunk.find(b"\n", start)
            if newline < 0:
                if not self._skipping:
                    self._buffer += chunk[start:]
                    if len(self._buffer) > MAX_LINE_BYTES:
                        self._buffer.clear()
                        self._skipping = True
                        _too_long(self._writer)
                return
            if self._skipping:
                self._skipping = False
            elif self._buffer:  # the line began in an earlier chunk
                self._buffer += chunk[start:newline]
                if len(self._buffer) > MAX_LINE_BYTES:
                    _too_long(self._writer)
                else:
                    self._complete()
                self._buffer.clear()
            elif newline - start > MAX_LINE_BYTES:
                _too_long(self._writer)
            else:  # a whole line in this chunk (every request of a working client): one copy
                line = chunk[start:newline]
                if line and not line.isspace():
                    self._ready.append(line)
            start = newline + 1

    def _complete(self) -> None:
        if self._buffer.strip():
            self._ready.append(bytes(self._buffer))


def _too_long(writer: Writer) -> None:
    logger.warning("dropped a message longer than %d bytes", MAX_LINE_BYTES)
    message = (
        f"Parse error: message exceeds the {MAX_LINE_BYTES // (1024 * 1024)} "
        "MiB line limit and was discarded"
    )
    writer.write(error_response(None, PARSE_ERROR, message).to_json())
