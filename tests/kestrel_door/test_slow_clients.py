"""Slow clients cannot starve the door (issue 45, item 6), tried as the attacker would.

* ``kestrel-door serve --header-timeout 1 --body-timeout 1`` as a subprocess: 300
  connections from six loopback addresses that never finish their headers (half send
  nothing, half trickle a header a byte at a time, still sending when the time is up),
  and a few that send their headers and then stall their body. While they hold on,
  ``/v1`` and ``/mcp`` calls with a token are answered; then every slow connection is
  closed by the door (``408`` where part of a request came, silently where nothing did).
* ``--max-connections-per-client`` and ``--max-connections``: one address past its cap
  is refused at once (``503``, closed) while others are served; past the cap in all,
  every new connection is refused; a connection closed frees its place.
* In process, the header clock stops at the head: a request that runs longer than the
  header timeout is answered, a keep-alive connection serves its next request and
  stays open while its requests come within the timeout of each other, and an idle one
  is closed without a 408.
"""

from __future__ import annotations

import select
import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from kestrel_door import ConnectionLimits, limit_connections
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Route

from tests.doors import Door, serve_door
from tests.loopback import serve_built

MCP_HEADERS = {
    "Accept": "application/json, text/event-stream",
    "Content-Type": "application/json",
    "MCP-Protocol-Version": "2025-11-25",
}
TOOLS_LIST = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
PARTIAL_HEAD = b"GET /v1/catalog HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: "
STALLED_BODY = (
    b"POST /v1/validate HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
    b'Content-Length: 1000\r\n\r\n{"source": "'
)


def _port(door: Door) -> int:
    return int(door.url.rsplit(":", 1)[1])


def _connect(port: int, source: str) -> socket.socket:
    """A connection to the door from ``source`` (any 127.0.0.0/8 address is loopback)."""
    conn = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    conn.bind((source, 0))
    conn.connect(("127.0.0.1", port))
    return conn


@contextmanager
def _closing(conns: list[socket.socket]) -> Iterator[list[socket.socket]]:
    try:
        yield conns
    finally:
        for conn in conns:
            conn.close()


def _answered(door: Door) -> None:
    """A normal client's ``/v1`` and ``/mcp`` calls, each answered well within 5 s."""
    auth = {"Authorization": f"Bearer {door.token}"}
    with httpx.Client(base_url=door.url, headers=auth, timeout=5) as http:
        catalog = http.get("/v1/catalog")
        assert catalog.status_code == 200, catalog.text
        assert catalog.json()["scenarios"]
        listed = http.post("/mcp", json=TOOLS_LIST, headers=MCP_HEADERS)
        assert listed.status_code == 200, listed.text
        assert listed.json()["result"]["tools"]


def _until_closed(
    conns: list[socket.socket], trickling: set[socket.socket], deadline: float
) -> dict[socket.socket, bytes]:
    """What each connection was sent until the door closed it; ``trickling`` ones send a
    byte of header every 0.1 s until then. Stops at ``deadline`` (the open ones missing)."""
    answers: dict[socket.socket, bytes] = {}
    received = dict.fromkeys(conns, b"")
    next_byte = time.monotonic()
    while len(answers) < len(conns) and time.monotonic() < deadline:
        still_open = [conn for conn in conns if conn not in answers]
        readable, _, _ = select.select(still_open, [], [], 0.05)
        for conn in readable:
            try:
                chunk = conn.recv(4096)
            except ConnectionResetError:
                chunk = b""
            received[conn] += chunk
            if not chunk:
                answers[conn] = received[conn]
        if time.monotonic() >= next_byte:
            next_byte += 0.1
            for conn in trickling.difference(answers, readable):
                conn.send(b"x")
    return answers


def test_300_slow_connections_leave_requests_answered_and_are_closed(tmp_path: Path) -> None:
    with serve_door(tmp_path / "door", "--header-timeout", "1", "--body-timeout", "1") as door:
        port = _port(door)
        with _closing([_connect(port, f"127.0.0.{2 + i % 6}") for i in range(300)]) as slow:
            opened = time.monotonic()
            trickling = set(slow[1::2])
            for conn in trickling:
                conn.sendall(PARTIAL_HEAD)
            with _closing([_connect(port, "127.0.0.8") for _ in range(5)]) as stalled:
                for conn in stalled:
                    conn.sendall(STALLED_BODY)

                _answered(door)
                _answered(door)

                answers = _until_closed([*slow, *stalled], trickling, deadline=opened + 10)
                held = len(slow) + len(stalled) - len(answers)
                assert held == 0, f"{held} slow connections still open after 10 s"
                assert time.monotonic() - opened >= 0.9  # closed by the timeout, not refused
                silent = [answers[conn] for conn in slow if conn not in trickling]
                assert silent == [b""] * 150
                for conn in [*trickling, *stalled]:
                    assert answers[conn].startswith(b"HTTP/1.1 408 "), answers[conn][:80]
                assert b"took too long to arrive" in answers[stalled[0]]
                _answered(door)


def _refusal(conn: socket.socket, timeout: float = 5.0) -> bytes:
    """All the door sends before it closes ``conn`` (it must close within ``timeout``)."""
    conn.settimeout(timeout)
    data = b""
    while chunk := conn.recv(4096):
        data += chunk
    return data


def _response(conn: socket.socket) -> bytes:
    """One ``done`` response read from ``conn`` (the connection stays open)."""
    conn.settimeout(5)
    data = b""
    while not data.endswith(b"done"):
        chunk = conn.recv(4096)
        assert chunk, f"the door closed the connection after {data!r}"
        data += chunk
    return data


def _silent(conns: list[socket.socket], wait: float = 0.3) -> bool:
    """No byte and no close on any of ``conns`` within ``wait`` seconds (held open)."""
    readable, _, _ = select.select(conns, [], [], wait)
    return not readable


def _answering(conns: list[socket.socket], at_least: int) -> list[socket.socket]:
    """The connections the door answered (or closed), once ``at_least`` of them are (5 s)."""
    deadline = time.monotonic() + 5
    while True:
        readable, _, _ = select.select(conns, [], [], 0.05)
        if len(readable) >= at_least or time.monotonic() > deadline:
            return list(readable)


def test_connection_caps_refuse_the_excess_at_once_and_serve_the_rest(tmp_path: Path) -> None:
    caps = ("--max-connections-per-client", "20", "--max-connections", "45")
    with serve_door(tmp_path / "door", *caps) as door:
        port = _port(door)
        with _closing([_connect(port, "127.0.0.2") for _ in range(20)]) as hog:
            assert _silent(hog)
            started = time.monotonic()
            with _closing([_connect(port, "127.0.0.2")]) as (excess,):
                refused = _refusal(excess)
            assert time.monotonic() - started < 2
            assert refused.startswith(b"HTTP/1.1 503 ")
            assert b'"LIMIT_EXCEEDED"' in refused
            assert b"too many connections from this address" in refused
            _answered(door)

            # The cap in all: 20 + 20 + the normal client's keep-alive leave 4 or 5 places.
            with (
                _closing([_connect(port, "127.0.0.3") for _ in range(20)]) as others,
                _closing([_connect(port, "127.0.0.4") for _ in range(10)]) as late,
            ):
                turned_away = _answering(late, at_least=5)
                assert len(turned_away) <= 6
                for conn in turned_away:
                    answer = _refusal(conn)
                    assert answer.startswith(b"HTTP/1.1 503 ")
                    assert b"too many connections" in answer
                    assert b"from this address" not in answer
                assert _silent([*hog, *others])

        # Places are given back when connections close: .2 is served again.
        deadline = time.monotonic() + 5
        while True:
            with _closing([_connect(port, "127.0.0.2")]) as (again,):
                if _silent([again], 0.3):
                    break
            assert time.monotonic() < deadline, "closed connections never gave their place back"
        _answered(door)


@pytest.mark.anyio
async def test_the_header_clock_stops_at_the_head_and_restarts_after_the_response() -> None:
    async def slow(request: Request) -> PlainTextResponse:
        await anyio.sleep(float(request.query_params.get("s", "0")))
        return PlainTextResponse("done")

    app, protocol = limit_connections(
        Starlette(routes=[Route("/", slow)]), ConnectionLimits(header_timeout_s=0.5)
    )

    def make(_base: str) -> Any:
        return app

    async with serve_built(make, http=protocol) as url, httpx.AsyncClient(base_url=url) as http:
        # A request running longer than the header timeout is answered, on one connection
        # that then serves the next request.
        assert (await http.get("/", params={"s": "1.2"})).text == "done"
        assert (await http.get("/")).text == "done"
        port = int(url.rsplit(":", 1)[1])
        # A client that keeps asking within the timeout keeps its connection, however long.
        with _closing([_connect(port, "127.0.0.1")]) as (kept,):
            for _ in range(4):
                kept.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
                answer = await anyio.to_thread.run_sync(_response, kept)
                assert answer.startswith(b"HTTP/1.1 200 ")
                await anyio.sleep(0.3)
        # An idle keep-alive connection is closed, without a 408 (no request had begun).
        with _closing([_connect(port, "127.0.0.1")]) as (conn,):
            conn.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            answer = await anyio.to_thread.run_sync(_refusal, conn)
        assert answer.startswith(b"HTTP/1.1 200 ")
        assert answer.endswith(b"done")
