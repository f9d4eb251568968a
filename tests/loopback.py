"""Loopback HTTP servers for tests: an ASGI app on uvicorn at 127.0.0.1 on a free port,
or a server subprocess waited for until it answers.

One copy of the bind / start / wait-until-started / stop dance, so that every suite's
loopback server starts and stops the same way (the tests' network is loopback only).
"""

from __future__ import annotations

import socket
import subprocess
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx
import uvicorn

__all__ = ["free_port", "serve", "serve_built", "wait_for_http"]


def free_port() -> int:
    """A loopback port nothing listens on right now (for a server in a subprocess)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_for_http(
    url: str, process: subprocess.Popen[Any], timeout: float = 120.0
) -> httpx.Response:
    """GET ``url`` until a server in ``process`` answers; raises once it exits or time is up.

    Returns as soon as the server answers; the deadline is generous because a new machine
    (a fresh venv, no bytecode cache yet) under load takes well over 20 s to start a door.
    """
    deadline = time.monotonic() + timeout
    while True:
        try:
            return httpx.get(url, timeout=1)
        except httpx.TransportError:
            if time.monotonic() > deadline or process.poll() is not None:
                raise
            time.sleep(0.1)


@asynccontextmanager
async def serve_built(
    make_app: Callable[[str], Any],
    *,
    port: int | None = None,
    backlog: int = 2048,
    start_timeout: float = 10.0,
    http: Any = "auto",
) -> AsyncIterator[str]:
    """Serve ``make_app(base_url)`` (an app that must know its own URL); yields the URL.

    ``http`` is uvicorn's HTTP protocol (a name or an ``asyncio.Protocol`` class)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port or 0))
    base_url = f"http://127.0.0.1:{sock.getsockname()[1]}"
    try:
        config = uvicorn.Config(
            make_app(base_url),
            log_level="warning",
            lifespan="off",
            access_log=False,
            backlog=backlog,
            http=http,
        )
        server = uvicorn.Server(config)
        async with anyio.create_task_group() as tg:
            tg.start_soon(server.serve, [sock])
            with anyio.fail_after(start_timeout):
                while not server.started:
                    await anyio.sleep(0.01)
            try:
                yield base_url
            finally:
                server.should_exit = True
    finally:
        sock.close()


@asynccontextmanager
async def serve(app: Any, **options: Any) -> AsyncIterator[str]:
    """Serve ``app``; yields its base URL (``options`` as for :func:`serve_built`)."""
    async with serve_built(lambda _base_url: app, **options) as base_url:
        yield base_url
