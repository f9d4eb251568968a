"""An ``/mcp`` request's face and MCP session are freed when the answer is sent.

Each POST builds its own :class:`~kestrel_door.mcp_face.DoorMcp` and
:class:`~kestrel_protocol.surface.McpSession`. Held in a reference cycle (a method table
of bound methods, a guard bound to the face), every request's would be left for the
cycle collector, whose passes then walk them with every request in flight waiting.
"""

from __future__ import annotations

import gc

import pytest
from kestrel_door.mcp_face import DoorMcp
from kestrel_protocol.surface import McpSession

from .conftest import Kit, asgi_client

pytestmark = pytest.mark.anyio


def _call(request_id: int) -> dict[str, object]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": "kestrel_catalog"},
    }


async def test_an_mcp_request_leaves_nothing_for_the_cycle_collector(kit: Kit) -> None:
    # a grant's token: its face guards every method by the grant's scopes
    async with asgi_client(kit.app(), kit.token("alice", ("kestrel:read",))) as client:
        assert (await client.post("/mcp", json=_call(0))).status_code == 200
        gc.collect()
        gc.disable()
        try:
            for request_id in range(1, 21):
                answer = await client.post("/mcp", json=_call(request_id))
                assert answer.status_code == 200
                assert "kestrel.catalog" in answer.json()["result"]["content"][0]["text"]
            alive = [o for o in gc.get_objects() if isinstance(o, DoorMcp | McpSession)]
        finally:
            gc.enable()
    assert alive == []
