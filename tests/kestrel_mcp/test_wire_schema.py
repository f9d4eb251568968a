"""Every result validates against the official MCP schema types of its era (``mcp_types``).

The per-version surface models are generated from the specification's own
``schema.json`` for 2025-11-25 and 2026-07-28, so this is the spec's schema, not ours.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

import pytest
from kestrel_mcp import KestrelMcpServer, create_kestrel_mcp_server
from mcp_types.methods import validate_server_result

pytestmark = pytest.mark.anyio

MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}


async def exchange(
    server: KestrelMcpServer, method: str, params: dict[str, Any], modern: bool
) -> dict[str, Any]:
    body = dict(params)
    if modern:
        body["_meta"] = MODERN_META
    response = await server.handle({"jsonrpc": "2.0", "id": 1, "method": method, "params": body})
    assert response is not None
    assert "result" in response, response
    result: dict[str, Any] = response["result"]
    return result


@pytest.mark.parametrize(
    ("version", "modern"),
    [("2024-11-05", False), ("2025-06-18", False), ("2025-11-25", False), ("2026-07-28", True)],
)
async def test_results_conform_to_the_official_schema(
    acme: ModuleType, version: str, modern: bool
) -> None:
    server = create_kestrel_mcp_server(
        acme.scripted(newer=True, gate=False)[0], secret_store=acme.MemorySecretStore
    )
    if modern:
        validate_server_result(
            "server/discover", version, await exchange(server, "server/discover", {}, True)
        )
    else:
        init = await exchange(
            server, "initialize", {"protocolVersion": version, "capabilities": {}}, False
        )
        assert init["protocolVersion"] == version
        validate_server_result("initialize", version, init)
        validate_server_result("ping", version, await exchange(server, "ping", {}, False))
    checks: list[tuple[str, dict[str, Any]]] = [
        ("tools/list", {}),
        ("resources/list", {}),
        ("resources/templates/list", {}),
        ("resources/read", {"uri": "kestrel://catalog"}),
        ("resources/read", {"uri": "kestrel://catalog/scenarios/acme-trend/tape"}),
        (
            "completion/complete",
            {
                "ref": {"type": "ref/resource", "uri": "kestrel://catalog/scenarios/{id}"},
                "argument": {"name": "id", "value": "a"},
            },
        ),
        ("tools/call", {"name": "kestrel_catalog", "arguments": {}}),
        ("tools/call", {"name": "kestrel_session_open", "arguments": {"scenario": "acme-trend"}}),
        (
            "tools/call",
            {
                "name": "kestrel_session_submit",
                "arguments": {"sessionId": "ks_fake1", "source": "advance"},
            },
        ),
        (
            "tools/call",
            {
                "name": "kestrel_session_submit",
                "arguments": {"sessionId": "ks_fake1", "source": "bogus"},
            },
        ),
        ("tools/call", {"name": "kestrel_secrets_list", "arguments": {}}),
    ]
    for method, params in checks:
        result = await exchange(server, method, params, modern)
        validate_server_result(method, version, result)
        if modern:
            assert result["resultType"] == "complete"
