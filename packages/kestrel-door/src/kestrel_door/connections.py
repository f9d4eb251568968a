"""Connection limits under the app: how long a request head may take to arrive, and how
many connections one client address, and all clients, may hold open.

uvicorn bounds a request head's size (16 KiB) but not its time: a connection that sends
its head a byte at a time, or nothing at all, is held for as long as the client likes,
with no credential. :func:`limit_connections` wraps uvicorn's HTTP protocol (uvicorn's
``Config(http=…)`` takes an ``asyncio.Protocol`` class) in one of our own that

* refuses a connection at once, ``503`` and closed, when its client address already
  holds ``max_connections_per_client`` connections or the door ``max_connections``;
* closes a connection whose request head is not complete ``header_timeout_s`` after it
  was opened or after its previous response (a ``408`` when part of a head had come).

The protocol learns that a head is complete from the ASGI app it also returns: uvicorn
runs a request in a task created while our protocol passes it the bytes, so the task
inherits a context variable naming the connection, and the app marks the request's start
and end on it. A normal request pays for one context-variable set per read and two
calls that move a deadline (one timer per connection, not one per request).
Bodies are bounded in time by the guard (:mod:`kestrel_door.guard`, ``408``). uvicorn's
protocol writes through :class:`~kestrel_door.writes.CoalescedWrites`: a response's head
and body leave in one ``send``.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, ClassVar

from starlette.types import ASGIApp, Receive, Scope, Send
from uvicorn.protocols.http.auto import AutoHTTPProtocol

from .guard import refusal_bytes
from .writes import CoalescedWrites

__all__ = ["ConnectionLimits", "limit_connections"]

logger = logging.getLogger("kestrel_door")


@dataclass(frozen=True, slots=True)
class ConnectionLimits:
    """What ``kestrel-door serve`` allows a connection (each a ``serve`` option)."""

    header_timeout_s: float = 10.0
    max_connections: int = 1000
    max_connections_per_client: int = 100


def _raw_refusal(status: int, reason: str, message: str) -> bytes:
    """A whole HTTP/1.1 response with the door's refusal body, that closes the connection."""
    body = refusal_bytes("LIMIT_EXCEEDED", message)
    head = (
        f"HTTP/1.1 {status} {reason}\r\ncontent-type: application/json\r\n"
        f"content-length: {len(body)}\r\nconnection: close\r\n"
    )
    if status == 503:
        head += "retry-after: 1\r\n"
    return (head + "\r\n").encode("ascii") + body


_FROM_CLIENT = "too many connections from this address"
_IN_ALL = "too many connections"
_REFUSALS = {
    message: _raw_refusal(503, "Service Unavailable", message)
    for message in (_FROM_CLIENT, _IN_ALL)
}
_HEAD_TOO_SLOW = _raw_refusal(408, "Request Timeout", "the request head took too long to arrive")
_WARN_EVERY_S = 60.0


class _Census:
    """Open connections per client address and in all, for one server."""

    def __init__(self, limits: ConnectionLimits) -> None:
        self.limits = limits
        self.per_client: dict[str, int] = {}
        self.total = 0
        self.refused = 0  # since the last warning
        self.warned_at: float | None = None

    def admit(self, client: str) -> bytes | None:
        """Count the connection in, or the response that refuses it."""
        held = self.per_client.get(client, 0)
        if held >= self.limits.max_connections_per_client:
            return self._refuse(_FROM_CLIENT, client)
        if self.total >= self.limits.max_connections:
            return self._refuse(_IN_ALL, client)
        self.per_client[client] = held + 1
        self.total += 1
        return None

    def release(self, client: str) -> None:
        self.total -= 1
        left = self.per_client[client] - 1
        if left:
            self.per_client[client] = left
        else:
            del self.per_client[client]

    def _refuse(self, message: str, client: str) -> bytes:
        """The refusal; a warning at most once a minute (an attack must not flood the log)."""
        self.refused += 1
        now = asyncio.get_running_loop().time()
        if self.warned_at is None or now - self.warned_at >= _WARN_EVERY_S:
            logger.warning(
                "refused %d connection(s), the last from %s: %s",
                self.refused,
                client or "a local peer",
                message,
            )
            self.refused, self.warned_at = 0, now
        return _REFUSALS[message]


_CONNECTION: ContextVar[_LimitedConnection | None] = ContextVar(
    "kestrel_door_connection", default=None
)


class _LimitedConnection(asyncio.Protocol):
    """uvicorn's protocol for one connection, inside the census and the head timer."""

    census: ClassVar[_Census]
    inner_class: ClassVar[Callable[..., asyncio.Protocol]]

    def __init__(self, **uvicorn_arguments: Any) -> None:
        self._arguments = uvicorn_arguments
        self._inner: asyncio.Protocol | None = None  # None: refused
        self._transport: asyncio.Transport | None = None
        self._client = ""
        self._timer: asyncio.TimerHandle | None = None
        self._deadline: float | None = None  # None while a request is in
        self._requests = 0  # requests whose head came and whose app has not returned
        self._heard = False  # bytes came since the connection opened or went idle

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        peer = transport.get_extra_info("peername")
        self._client = str(peer[0]) if isinstance(peer, (tuple, list)) else ""
        refusal = self.census.admit(self._client)
        if refusal is not None:
            transport.write(refusal)
            transport.close()
            return
        self._transport = CoalescedWrites(transport)  # a response's head and body: one send
        self._inner = self.inner_class(**self._arguments)
        self._arm()
        token = _CONNECTION.set(self)
        try:
            self._inner.connection_made(self._transport)
        finally:
            _CONNECTION.reset(token)

    def data_received(self, data: bytes) -> None:
        if self._inner is None:
            return
        self._heard = True
        token = _CONNECTION.set(self)
        try:
            self._inner.data_received(data)
        finally:
            _CONNECTION.reset(token)

    def eof_received(self) -> bool | None:
        return None if self._inner is None else self._inner.eof_received()

    def connection_lost(self, exc: Exception | None) -> None:
        if self._inner is None:
            return
        self._disarm()
        self.census.release(self._client)
        self._inner.connection_lost(exc)

    def pause_writing(self) -> None:
        if self._inner is not None:
            self._inner.pause_writing()

    def resume_writing(self) -> None:
        if self._inner is not None:
            self._inner.resume_writing()

    def request_started(self) -> None:
        """The app has a request: its head came in time."""
        self._requests += 1
        self._deadline = None

    def request_ended(self) -> None:
        """The app returned; with nothing else in flight the next head's clock starts."""
        self._requests -= 1
        if self._requests == 0:
            self._heard = False
            self._arm()

    def _arm(self) -> None:
        """Start the head's clock. One timer serves many requests: moving the deadline is
        all a request costs, and the timer, when it fires early, waits for the new one."""
        assert self._transport is not None
        if self._transport.is_closing():
            return
        loop = asyncio.get_running_loop()
        self._deadline = loop.time() + self.census.limits.header_timeout_s
        if self._timer is None:
            self._timer = loop.call_at(self._deadline, self._check)

    def _disarm(self) -> None:
        self._deadline = None
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _check(self) -> None:
        self._timer = None
        if self._deadline is None:  # a request is in; its end starts the clock again
            return
        loop = asyncio.get_running_loop()
        if loop.time() < self._deadline:
            self._timer = loop.call_at(self._deadline, self._check)
            return
        assert self._transport is not None
        if self._transport.is_closing():  # pragma: no cover - closed since the last read
            return
        if self._heard:
            self._transport.write(_HEAD_TOO_SLOW)
        self._transport.close()


def limit_connections(
    app: ASGIApp,
    limits: ConnectionLimits,
    *,
    http: Callable[..., asyncio.Protocol] = AutoHTTPProtocol,
) -> tuple[ASGIApp, type[asyncio.Protocol]]:
    """The app to serve and the protocol class for ``uvicorn.Config(app, http=…)``.

    Both belong together (one census, one server): the app tells the protocol when a
    request's head has come; ``http`` is uvicorn's protocol doing the HTTP.
    """
    census = _Census(limits)
    protocol = type(
        "LimitedConnection", (_LimitedConnection,), {"census": census, "inner_class": http}
    )

    async def tracked(scope: Scope, receive: Receive, send: Send) -> None:
        connection = _CONNECTION.get()
        if connection is None or scope["type"] != "http":
            await app(scope, receive, send)
            return
        connection.request_started()
        try:
            await app(scope, receive, send)
        finally:
            connection.request_ended()

    return tracked, protocol
