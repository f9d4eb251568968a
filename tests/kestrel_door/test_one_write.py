"""A response leaves the door in one socket write (head and body together), in order.

uvicorn writes a response's head and its body separately: on an idle keep-alive
connection that was two ``send`` calls and two TCP segments per answer, each waking
the client. The door's connection wrapper (``limit_connections``) hands uvicorn's
protocol a transport that sends one event-loop step's writes together. Driven here in
process, uvicorn's own protocol over a transport that records what reaches the socket:
one write per answer with the same bytes, a streamed answer's parts still sent as they
come and in order, and a ``Connection: close`` answer sent before the socket closes.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import anyio
import pytest
import uvicorn
from kestrel_door import ConnectionLimits, limit_connections
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response, StreamingResponse
from starlette.routing import Route
from uvicorn.server import ServerState


class _Socket(asyncio.Transport):
    """What reaches the socket: each ``write`` as it was called, then whether it closed."""

    def __init__(self) -> None:
        super().__init__()
        self.writes: list[bytes] = []
        self.closed_after: int | None = None
        self.protocol: asyncio.BaseProtocol | None = None

    def write(self, data: Any) -> None:
        assert self.closed_after is None, "written after close"
        self.writes.append(bytes(data))

    def close(self) -> None:
        if self.closed_after is None:
            self.closed_after = len(self.writes)

    def is_closing(self) -> bool:
        return self.closed_after is not None

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return {"peername": ("127.0.0.1", 40000), "sockname": ("127.0.0.1", 8000)}.get(
            name, default
        )

    def set_protocol(self, protocol: asyncio.BaseProtocol) -> None:
        self.protocol = protocol

    def get_protocol(self) -> asyncio.BaseProtocol:
        assert self.protocol is not None
        return self.protocol

    def pause_reading(self) -> None:
        pass

    def resume_reading(self) -> None:
        pass

    def get_write_buffer_size(self) -> int:
        return 0


async def _answer(request: Request) -> Response:
    return PlainTextResponse("x" * 3000)


async def _streamed(request: Request) -> Response:
    async def parts() -> AsyncIterator[bytes]:
        for part in (b"one.", b"two.", b"three."):
            yield part
            await anyio.sleep(0.01)

    return StreamingResponse(parts(), media_type="text/event-stream")


def _connection() -> tuple[asyncio.Protocol, _Socket]:
    app, protocol = limit_connections(
        Starlette(routes=[Route("/", _answer), Route("/stream", _streamed)]), ConnectionLimits()
    )
    config = uvicorn.Config(app, http=protocol, log_level="warning", lifespan="off")
    config.load()
    arguments: dict[str, Any] = {"config": config, "server_state": ServerState(), "app_state": {}}
    connection = protocol(**arguments)  # as uvicorn makes one per connection
    socket = _Socket()
    connection.connection_made(socket)
    return connection, socket


async def _until(check: Any) -> None:
    with anyio.fail_after(5):
        while not check():
            await anyio.sleep(0.005)


@pytest.mark.anyio
async def test_each_answer_on_a_keep_alive_connection_is_one_write() -> None:
    connection, socket = _connection()
    for sent in range(1, 4):
        connection.data_received(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        await _until(lambda n=sent: b"".join(socket.writes).count(b"HTTP/1.1 200 ") == n)
        await anyio.sleep(0.02)  # anything still to come would be written by now
        assert len(socket.writes) == sent, "head and body were written separately"
        answer = socket.writes[-1]
        head, _, body = answer.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 200 ")
        assert b"content-length: 3000" in head
        assert body == b"x" * 3000
    assert socket.closed_after is None
    connection.connection_lost(None)


@pytest.mark.anyio
async def test_a_streamed_answer_leaves_part_by_part_in_order() -> None:
    connection, socket = _connection()
    connection.data_received(b"GET /stream HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    await _until(lambda: b"".join(socket.writes).endswith(b"0\r\n\r\n"))
    wire = b"".join(socket.writes)
    assert wire.index(b"one.") < wire.index(b"two.") < wire.index(b"three.")
    # each part went out in its own step, not held back until the stream ended
    assert len(socket.writes) >= 3
    connection.connection_lost(None)


@pytest.mark.anyio
async def test_an_answer_that_closes_the_connection_is_sent_before_the_close() -> None:
    connection, socket = _connection()
    connection.data_received(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
    await _until(lambda: socket.closed_after is not None)
    assert socket.closed_after == len(socket.writes) == 1
    assert socket.writes[0].endswith(b"x" * 3000)
    connection.connection_lost(None)
