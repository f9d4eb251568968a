"""Property: ``handle`` never raises and never reports an internal fault for garbage input."""

from __future__ import annotations

import json
from types import ModuleType
from typing import Any

import anyio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kestrel_mcp import create_kestrel_mcp_server

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=6), children, max_size=3)
    ),
    max_leaves=8,
)
methods = st.sampled_from(
    [
        "initialize",
        "ping",
        "server/discover",
        "tools/list",
        "tools/call",
        "resources/list",
        "resources/read",
        "resources/templates/list",
        "completion/complete",
        "notifications/cancelled",
        "nope",
    ]
)
tool_names = st.sampled_from(["kestrel_catalog", "kestrel_session_submit", "kestrel.grade", "x"])
params = st.one_of(
    json_values,
    st.fixed_dictionaries({"name": tool_names | json_values, "arguments": json_values}),
    st.fixed_dictionaries({"uri": st.text(max_size=20) | json_values}),
    st.fixed_dictionaries({"cursor": json_values}),
    st.fixed_dictionaries(
        {
            "_meta": st.fixed_dictionaries(
                {
                    "io.modelcontextprotocol/protocolVersion": st.sampled_from(
                        ["2026-07-28", "2025-11-25"]
                    )
                    | json_values,
                    "io.modelcontextprotocol/clientCapabilities": json_values,
                }
            )
        }
    ),
)
messages = st.one_of(
    json_values,
    st.fixed_dictionaries(
        {
            "jsonrpc": st.just("2.0"),
            "id": st.integers() | st.text(max_size=4),
            "method": methods,
            "params": params,
        }
    ),
    st.fixed_dictionaries({"jsonrpc": st.just("2.0"), "method": methods, "params": params}),
    st.fixed_dictionaries(
        {"jsonrpc": json_values, "id": json_values, "method": methods | json_values}
    ),
)


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(message=messages)
def test_handle_never_raises_nor_faults(acme: ModuleType, message: Any) -> None:
    server = create_kestrel_mcp_server(acme.scripted()[0], secret_store=acme.MemorySecretStore)

    async def run() -> None:
        response = await server.handle(message)
        framed = await server.handle_frame(json.dumps(message))
        for out in (response, framed):
            if out is None:
                assert isinstance(message, dict)
                assert "id" not in message or "result" in message or "error" in message
                continue
            assert out["jsonrpc"] == "2.0"
            assert ("result" in out) != ("error" in out)
            if "error" in out:
                assert out["error"]["code"] != -32603, (message, out)
            json.dumps(out)

    anyio.run(run)
