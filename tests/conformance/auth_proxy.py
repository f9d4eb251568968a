"""A byte-level loopback proxy that adds an ``Authorization`` header to HTTP/1.1 requests
that carry none, and changes nothing else.

The MCP conformance suite's client sends no credential and has no option to send one; the
door refuses anonymous calls. This proxy sits between them: each request head gets the
issued token's header appended (unless it already has one), its body is copied as framed
(``Content-Length`` or chunked), and the door's response bytes flow back untouched — so
Host, Origin, the protocol headers, status lines and SSE streams are exactly the door's.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress

import anyio
from anyio.abc import ByteStream, SocketStream
from anyio.streams.buffered import BufferedByteReceiveStream

__all__ = ["auth_proxy"]

_MAX_HEAD = 64 * 1024


async def _copy_body(reader: BufferedByteReceiveStream, upstream: ByteStream, head: bytes) -> None:
    fields = {}
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        fields[name.strip().lower()] = value.strip().lower()
    if b"chunked" in fields.get(b"transfer-encoding", b""):
        while True:
            size_line = await reader.receive_until(b"\r\n", _MAX_HEAD)
            await upstream.send(size_line + b"\r\n")
            size = int(size_line.split(b";")[0].strip() or b"0", 16)
            if size == 0:
                while True:  # trailers, then the empty line that ends the body
                    trailer = await reader.receive_until(b"\r\n", _MAX_HEAD)
                    await upstream.send(trailer + b"\r\n")
                    if not trailer:
                        return
            await upstream.send(await reader.receive_exactly(size + 2))
    remaining = int(fields.get(b"content-length", b"0") or b"0")
    while remaining > 0:
        chunk = await reader.receive_exactly(min(remaining, 65536))
        await upstream.send(chunk)
        remaining -= len(chunk)


async def _requests(client: SocketStream, upstream: SocketStream, header: bytes) -> None:
    """Client to door, one request at a time; the client's EOF becomes the door's."""
    reader = BufferedByteReceiveStream(client)
    try:
        while True:
            head = await reader.receive_until(b"\r\n\r\n", _MAX_HEAD)
            lines = head.split(b"\r\n")
            if not any(line.lower().startswith(b"authorization:") for line in lines[1:]):
                lines.append(header)
            await upstream.send(b"\r\n".join(lines) + b"\r\n\r\n")
            await _copy_body(reader, upstream, head)
    except (anyio.EndOfStream, anyio.IncompleteRead):
        with suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
            await upstream.send_eof()
    except (anyio.BrokenResourceError, anyio.ClosedResourceError):
        pass  # either side went away: the relay below ends the connection


async def _relay(client: SocketStream, target_port: int, header: bytes) -> None:
    async with (
        client,
        await anyio.connect_tcp("127.0.0.1", target_port) as upstream,
        anyio.create_task_group() as tg,
    ):
        tg.start_soon(_requests, client, upstream, header)
        with suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
            async for chunk in upstream:  # door to client, byte for byte
                await client.send(chunk)
        tg.cancel_scope.cancel()  # the door closed the connection: so does the proxy


@asynccontextmanager
async def auth_proxy(target_port: int, token: str) -> AsyncIterator[int]:
    """Serve the proxy to ``127.0.0.1:target_port`` on a free loopback port; yields the port."""
    header = b"Authorization: Bearer " + token.encode("ascii")
    listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=0)
    port = int(listener.extra(anyio.abc.SocketAttribute.local_port))

    async def handle(client: SocketStream) -> None:
        await _relay(client, target_port, header)

    async with listener, anyio.create_task_group() as tg:
        tg.start_soon(listener.serve, handle)
        try:
            yield port
        finally:
            tg.cancel_scope.cancel()
