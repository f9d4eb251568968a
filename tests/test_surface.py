"""One surface: every face is generated from ``kestrel_protocol.surface`` and nothing else.

* each tool name appears in exactly one non-test source file (its declaration);
* deleting a tool from the surface removes it from every face with no other edit:
  stdio ``tools/list``/``tools/call``, the door's ``/mcp`` in both eras, its ``/v1``
  route and OpenAPI path, the scope table, and the resources that project it;
* the declarations say what hosts rely on (honest hints, strict argument models).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import httpx
import pytest
from kestrel_door import AuditLog, DoorConfig, DoorStore, IssuedTokens, create_door_app
from kestrel_mcp import create_kestrel_mcp_server
from kestrel_mcp.secrets import SecretTools, secret_tools
from kestrel_protocol.surface import SURFACE, Surface
from kestrel_sdk import local_transport

ROOT = Path(__file__).resolve().parents[1]
SOURCES = sorted((ROOT / "packages").glob("*/src/**/*.py"))
ALL_TOOLS = [t.name for t in SURFACE.tools] + [t.name for t in secret_tools(SecretTools())]
BASE = "http://127.0.0.1:8787"
MODERN = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}


@pytest.mark.parametrize("name", ALL_TOOLS)
def test_each_tool_name_is_in_exactly_one_source_file(name: str) -> None:
    word = re.compile(rf"\b{re.escape(name)}\b")
    holders = [p.relative_to(ROOT) for p in SOURCES if word.search(p.read_text("utf-8"))]
    assert len(holders) == 1, holders


def test_every_argument_model_refuses_unknown_arguments_and_hints_are_honest() -> None:
    for tool in SURFACE.tools:
        schema = tool.listing["inputSchema"]
        assert schema["additionalProperties"] is False, tool.name
        assert tool.arguments.model_config.get("extra") == "forbid", tool.name
    grade = SURFACE.tool("kestrel_grade")
    assert grade.listing["annotations"]["destructiveHint"] is True
    assert "closed first, for good" in grade.description
    assert SURFACE.tool("kestrel.session.open") is SURFACE.tool("kestrel_session_open")


def _rpc(method: str, params: dict[str, Any], rid: int = 1) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "method": method, "params": params}


async def _stdio(surface: Surface, home: Path) -> dict[str, Any]:
    transport = local_transport(home=home / "stdio", principal="alice")
    server = create_kestrel_mcp_server(transport, secrets=False, surface=surface)
    try:
        listed = await server.handle(_rpc("tools/list", {}))
        called = await server.handle(
            _rpc("tools/call", {"name": "kestrel_session_blotter", "arguments": {"sessionId": "x"}})
        )
        templates = await server.handle(_rpc("resources/templates/list", {}))
        read = await server.handle(
            _rpc("resources/read", {"uri": "kestrel://catalog/scenarios/acme-trend"})
        )
    finally:
        await transport.aclose()
    assert listed is not None
    assert called is not None
    assert templates is not None
    assert read is not None
    return {
        "tools": [t["name"] for t in listed["result"]["tools"]],
        "call": called.get("error", {}).get("code"),
        "templates": [t["uriTemplate"] for t in templates["result"]["resourceTemplates"]],
        "read": read.get("error", {}).get("code", 0),
    }


async def _door(surface: Surface, home: Path) -> dict[str, Any]:
    owner: Any = local_transport(home=home / "door")
    store = DoorStore(home / "door.db")
    _, token = IssuedTokens(store).issue(
        "alice", ["kestrel:read", "kestrel:trade", "kestrel:grade"]
    )
    app = create_door_app(
        DoorConfig(base_url=BASE),
        transport_for=lambda p: local_transport(principal=p, runtime=owner.runtime),
        grant_verifiers=[IssuedTokens(store)],
        audit=AuditLog(store),
        surface=surface,
    )
    headers = {"Authorization": f"Bearer {token}", "Accept": "application/json"}
    modern = {**headers, "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/list"}
    try:
        async with httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app), base_url=BASE, headers=headers
        ) as client:
            legacy = (await client.post("/mcp", json=_rpc("tools/list", {}))).json()
            new = (
                await client.post(
                    "/mcp", json=_rpc("tools/list", {"_meta": MODERN}), headers=modern
                )
            ).json()
            called = (
                await client.post(
                    "/mcp",
                    json=_rpc(
                        "tools/call",
                        {"name": "kestrel_session_blotter", "arguments": {"sessionId": "x"}},
                    ),
                )
            ).json()
            route = await client.get("/v1/sessions/x/blotter")
            document = (await client.get("/v1/openapi.json")).json()
            templates = (
                await client.post("/mcp", json=_rpc("resources/templates/list", {}))
            ).json()
    finally:
        await owner.aclose()
        store.close()
    return {
        "tools": [t["name"] for t in legacy["result"]["tools"]],
        "modern": [t["name"] for t in new["result"]["tools"]],
        "call": called.get("error", {}).get("code"),
        "route": (route.status_code, _refusal_code(route)),
        "paths": set(document["paths"]),
        "templates": [t["uriTemplate"] for t in templates["result"]["resourceTemplates"]],
    }


def _refusal_code(response: httpx.Response) -> str | None:
    try:
        return str(response.json()["refusal"]["code"])
    except ValueError:
        return None


@pytest.mark.anyio
async def test_deleting_a_tool_from_the_surface_removes_it_from_every_face(tmp_path: Path) -> None:
    full_stdio = await _stdio(SURFACE, tmp_path / "a")
    full_door = await _door(SURFACE, tmp_path / "a")
    assert "kestrel_session_blotter" in full_stdio["tools"]
    assert full_stdio["call"] is None  # served (a refusal result, not an error)
    assert "kestrel_session_blotter" in full_door["tools"]
    assert "kestrel_session_blotter" in full_door["modern"]
    assert full_door["route"] == (404, "UNKNOWN_SESSION")  # served: the session is unknown
    assert "/v1/sessions/{id}/blotter" in full_door["paths"]
    assert "kestrel://catalog/scenarios/{id}" in full_door["templates"]

    smaller = SURFACE.without("kestrel_session_blotter", "kestrel_scenario")
    assert "kestrel_session_blotter" not in smaller.scopes()
    stdio = await _stdio(smaller, tmp_path / "b")
    door = await _door(smaller, tmp_path / "b")
    for listed in (stdio["tools"], door["tools"], door["modern"]):
        assert "kestrel_session_blotter" not in listed
        assert "kestrel_session_frame" in listed
    assert stdio["call"] == door["call"] == -32602
    assert door["route"] == (404, None)  # no such route any more
    assert "/v1/sessions/{id}/blotter" not in door["paths"]
    assert "/v1/catalog/scenarios/{sid}" not in door["paths"]
    assert "/v1/sessions/{id}/frame" in door["paths"]
    # the resource that projects the deleted tool went with it
    for templates in (stdio["templates"], door["templates"]):
        assert "kestrel://catalog/scenarios/{id}" not in templates
        assert "kestrel://catalog/scenarios/{id}/tape" in templates
    assert full_stdio["read"] == 0
    assert stdio["read"] == -32002
