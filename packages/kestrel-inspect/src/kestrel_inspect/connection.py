"""Where an evaluation's agent trades: ``kestrel-mcp`` over stdio on this machine, or a
Kestrel door's remote MCP (``/mcp``) with a bearer token.

One :class:`KestrelConnection` gives both clients an evaluation needs over the same face:
the Inspect ``MCPServer`` whose tools the model calls, and a plain MCP client for what the
harness itself asks (the scenario brief, the session's proof), so the harness sees
exactly what the agent's credentials can see, and nothing more.
"""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path

import httpx2
from inspect_ai.tool import MCPServer, mcp_server_http, mcp_server_stdio
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

__all__ = ["TOKEN_ENV", "KestrelConnection"]

TOKEN_ENV = "KESTREL_API_TOKEN"
"""The environment variable a door's bearer token is read from when none is given."""


@dataclass(frozen=True, slots=True)
class KestrelConnection:
    """The Kestrel an evaluation trades on.

    ``door`` is a door's base URL (its MCP endpoint is ``door + "/mcp"``); its bearer
    token is read when a request is made, from the file ``token_file`` or else from
    ``$KESTREL_API_TOKEN``, and is never held here, so nothing Inspect logs of a task,
    solver or scorer (their arguments) carries it. Without ``door``, ``kestrel-mcp``
    runs over stdio in this Python environment on ``home`` (default ``$KESTREL_HOME``
    or ``~/.kestrel``) with ``catalog_paths`` added to its catalog.
    """

    door: str | None = None
    token_file: str | None = None
    home: str | None = None
    catalog_paths: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.door is not None:
            if not self.door.startswith(("http://", "https://")):
                raise ValueError(f"door must be an http(s) URL, got {self.door!r}")
            if self.home is not None or self.catalog_paths:
                raise ValueError("home and catalog_paths are for kestrel-mcp, not a door")
        elif self.token_file is not None:
            raise ValueError("token_file is for a door: name its URL with door=…")

    @property
    def where(self) -> str:
        """What the connection names in logs and scores: the door's URL or ``kestrel-mcp``."""
        return self.door if self.door is not None else "kestrel-mcp"

    def _bearer(self) -> str:
        if self.token_file is not None:
            path = Path(self.token_file).expanduser()
            try:
                token = path.read_text(encoding="utf-8").strip()
            except (OSError, UnicodeDecodeError) as exc:
                raise ValueError(f"token_file {str(path)!r} cannot be read: {exc}") from None
            if not token:
                raise ValueError(f"token_file {str(path)!r} is empty")
            return token
        token = os.environ.get(TOKEN_ENV, "").strip()
        if not token:
            raise ValueError(
                f"a door needs a bearer token: set {TOKEN_ENV} or pass token_file=PATH "
                "(`kestrel-door token issue` makes one)"
            )
        return token

    def _mcp_url(self) -> str:
        assert self.door is not None
        return self.door.rstrip("/") + "/mcp"

    def stdio_parameters(self) -> StdioServerParameters:
        """``kestrel-mcp`` in this interpreter's environment, the caller's variables kept
        (``KESTREL_*`` included), answering without a spin between requests (a model
        thinks between its tool calls)."""
        args = ["-m", "kestrel_mcp", "--spin-us", "0"]
        if self.home is not None:
            args += ["--home", str(Path(self.home))]
        for path in self.catalog_paths:
            args += ["--catalog-path", str(path)]
        return StdioServerParameters(
            command=sys.executable, args=args, env={**os.environ, **self.env}
        )

    def inspect_server(self) -> MCPServer:
        """The Inspect MCP server whose tools the model calls."""
        if self.door is None:
            params = self.stdio_parameters()
            return mcp_server_stdio(
                name="kestrel", command=params.command, args=params.args, env=params.env
            )
        return mcp_server_http(name="kestrel", url=self._mcp_url(), authorization=self._bearer())

    @asynccontextmanager
    async def client(self) -> AsyncIterator[Client]:
        """A plain MCP client of the same face, for the harness's own requests."""
        if self.door is None:
            async with Client(self.stdio_parameters(), mode="legacy") as client:
                yield client
            return
        http = httpx2.AsyncClient(
            headers={"Authorization": f"Bearer {self._bearer()}"},
            timeout=httpx2.Timeout(30.0, read=300.0),
        )
        async with http, Client(streamable_http_client(self._mcp_url(), http_client=http)) as c:
            yield c
