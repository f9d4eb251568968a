"""What a model reads from the door's /mcp, in both eras: a session step's text is a few
compact lines, every figure it trades on and no root, while ``structuredContent`` keeps
the whole object and ``/v1`` answers it as before."""

from __future__ import annotations

import json
from typing import Any

import pytest
from kestrel_protocol import SessionResponse

from .conftest import Kit, asgi_client

pytestmark = pytest.mark.anyio

ACCEPT = {"Accept": "application/json, text/event-stream"}
MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}


def _call(name: str, arguments: dict[str, Any], modern: bool) -> dict[str, Any]:
    params: dict[str, Any] = {"name": name, "arguments": arguments}
    if modern:
        params["_meta"] = MODERN_META
    return {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}


def _headers(name: str, modern: bool) -> dict[str, str]:
    if not modern:
        return {"MCP-Protocol-Version": "2025-06-18"}
    return {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": name}


@pytest.mark.parametrize("modern", [False, True])
async def test_a_step_reads_as_compact_lines_and_the_object_stays_structured(
    kit: Kit, modern: bool
) -> None:
    async with asgi_client(kit.runtime_app(), kit.token(), **ACCEPT) as client:

        async def call(name: str, **arguments: Any) -> dict[str, Any]:
            resp = await client.post(
                "/mcp", json=_call(name, arguments, modern), headers=_headers(name, modern)
            )
            assert resp.status_code == 200, resp.text
            result: dict[str, Any] = resp.json()["result"]
            assert result["isError"] is False, result
            return result

        opened = await call("kestrel_session_open", scenario="acme-trend")
        sid = opened["structuredContent"]["sessionId"]
        step = await call("kestrel_session_submit", sessionId=sid, source="buy 10 ACME\nadvance 2")
        text = step["content"][0]["text"]
        data = step["structuredContent"]
        response = SessionResponse.parse(data)  # the whole object, roots included
        frame = response.delivery.frame
        assert "sha256:" not in text
        lines = text.splitlines()
        assert lines[0] == "submission 1 applied"
        clock = frame.clock
        assert lines[1] == (
            f"frame {frame.seq} of {sid} on {frame.scenario.id}: {frame.status}, bar "
            f"{clock.bar} ({clock.time}), {clock.remaining} bars remaining"
        )
        marks = ", ".join(f"{symbol} {price}" for symbol, price in frame.marks.items())
        assert f"marks: {marks}" in lines
        assert f"account: equity {frame.account.equity}, cash {frame.account.cash}," in text
        [p] = frame.positions
        assert f"positions: ACME 10 @ {p.avg_price} (unrealized {p.unrealized})" in lines
        assert f"bar 1 fill o1 10 @ {p.avg_price} fee " in text
        assert len(text) * 2 < len(json.dumps(data, separators=(",", ":")))
        # the frame tool reads the same lines; the close's record, no root at all
        framed = await call("kestrel_session_frame", sessionId=sid)
        assert framed["content"][0]["text"] == "\n".join(lines[1:])
        # /v1 answers the object, as ever
        again = await client.get(f"/v1/sessions/{sid}/frame")
        assert again.status_code == 200, again.text
        assert again.json() == framed["structuredContent"]
        assert again.json()["frameRoot"] == response.delivery.frame_root
        closed = await call("kestrel_session_close", sessionId=sid)
        assert "sha256:" not in closed["content"][0]["text"]
        assert closed["structuredContent"]["pentads"] == [response.pentad.root]
