"""The official ``mcp`` client over Streamable HTTP against a live door (uvicorn)."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Mapping
from typing import Any

import pytest
from kestrel_door import DoorConfig
from kestrel_protocol.ports import LiveTurn, RunContext
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from tests.loopback import serve

from .conftest import Kit

pytestmark = pytest.mark.anyio


@contextlib.asynccontextmanager
async def _serve_door(kit: Kit, versions: list[str]) -> AsyncIterator[str]:
    """The kit's door on uvicorn, its base URL matching the port; records the
    MCP-Protocol-Version header of every request so a test can see the era used."""
    holder: dict[str, Any] = {}

    async def app(scope: Any, receive: Any, send: Any) -> None:
        for key, value in scope.get("headers", []):
            if key == b"mcp-protocol-version":
                versions.append(value.decode())
        await holder["app"](scope, receive, send)

    async with serve(app) as url:
        holder["app"] = kit.app(config=DoorConfig(base_url=url))
        yield url


async def _use(url: str, token: str, mode: Any) -> tuple[list[str], Any]:
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
    transport = streamable_http_client(url + "/mcp", http_client=http)
    async with http, Client(transport, mode=mode) as client:
        tools = await client.list_tools()
        opened = await client.call_tool("kestrel_session_open", {"scenario": "acme-trend"})
        return [t.name for t in tools.tools], opened


@pytest.mark.parametrize(("mode", "era"), [("legacy", "2025-11-25"), ("auto", "2026-07-28")])
async def test_official_client_with_issued_token(kit: Kit, mode: str, era: str) -> None:
    versions: list[str] = []
    async with _serve_door(kit, versions) as url:
        names, opened = await _use(url, kit.token("alice"), mode)
    assert era in versions
    assert "kestrel_session_open" in names
    assert not [n for n in names if n.startswith("kestrel_secrets")]
    assert opened.is_error is False
    assert opened.structured_content["sessionId"].startswith("ks_")
    assert [r.tool for r in kit.audit.rows()] == ["kestrel_session_open"]


class _TurnTools:
    def __init__(self) -> None:
        self.calls: list[str] = []

    async def call(self, name: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
        self.calls.append(name)
        data = {"gated": False, "sessionId": "ks_from_the_turn"}
        return {
            "content": [{"type": "text", "text": "{}"}],
            "structuredContent": data,
            "isError": False,
        }


async def test_official_client_with_turn_credential(kit: Kit) -> None:
    tools = _TurnTools()
    turn = LiveTurn(RunContext("harness", "present", "host"), tools)
    dispose = kit.creds.publish("thread-9", turn)
    token = kit.creds.mint("thread-9")
    assert token is not None
    async with _serve_door(kit, []) as url:
        names, opened = await _use(url, token, "legacy")
        assert names
        assert opened.structured_content == {"gated": False, "sessionId": "ks_from_the_turn"}
        assert tools.calls == ["kestrel_session_open"]
        dispose()
        with pytest.raises(Exception):  # noqa: B017, PT011 - the client's own error for a 401
            await _use(url, token, "legacy")
    assert tools.calls == ["kestrel_session_open"]
