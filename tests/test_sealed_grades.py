"""A sealed session's close, grade, proof, listing and news say nothing of its tape's end.

``test_sealed_inference`` compares what two sealed tapes of different lengths serve
while a session trades (frames, history, blotter, refusals, validations). This goes on
where that stops: the same session at the same clock is closed, graded, listed, read
for news, proved, and its stored record, head and grade read back as artifacts, over the
SDK and the MCP server every stdio and ``/mcp`` face runs (its compact text included);
everything served on the tape of 2403 bars is what the tape of 2460 serves, ids and
roots renamed by order of appearance (a grade's metrics, its buy-and-hold, its checks'
words, the record's ``lookahead`` and the listing's clock included).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from kestrel_mcp import create_kestrel_mcp_server
from kestrel_protocol import KestrelError
from kestrel_sdk import create_sdk, local_transport

from tests.test_sealed_inference import CLOCK, LONG, SCENARIO, SHORT, _catalog, _renamed

pytestmark = pytest.mark.anyio


class _Mcp:
    """The MCP server over a transport: one JSON-RPC request at a time, its response."""

    def __init__(self, transport: Any) -> None:
        self.server = create_kestrel_mcp_server(transport)
        self.ids = 0

    async def rpc(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self.ids += 1
        message = {"jsonrpc": "2.0", "id": self.ids, "method": method, "params": params}
        answer = await self.server.handle(message)
        assert answer is not None
        found: dict[str, Any] = answer
        return found

    async def call(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        return await self.rpc("tools/call", {"name": name, "arguments": arguments})


async def _sdk_served(home: Path) -> list[str]:
    sdk = create_sdk(local_transport(home=home, sealed=[SCENARIO], principal="eve"))
    seen: list[str] = []

    async def call(name: str, **arguments: Any) -> Any:
        try:
            found = (await sdk.call(name, **arguments)).to_json()
        except KestrelError as exc:
            found = {"refusal": exc.refusal.to_json()}
        seen.append(json.dumps(found, sort_keys=True))
        return found

    try:
        opened = await call("kestrel_session_open", scenario=SCENARIO, label="sdk")
        sid = opened["sessionId"]
        await call("kestrel_session_submit", session_id=sid, source=f"buy 10 ACME\nadvance {CLOCK}")
        await call("kestrel_session_news", session_id=sid, limit=100)
        await call("kestrel_session_list")
        record = await call("kestrel_session_close", session_id=sid)
        await call("kestrel_session_submit", session_id=sid, source="advance 1")
        grade = await call("kestrel_grade", session_id=sid)
        await call("kestrel_session_list")
        await call("kestrel_proof", session_id=sid)
        await call("kestrel_proof", session_id=sid, embed_tape=True)
        for root in (record["root"], record["head"], grade["root"]):
            await call("kestrel_artifact", root=root)
    finally:
        await sdk.aclose()
    return seen


async def _mcp_served(home: Path) -> list[str]:
    transport = local_transport(home=home, sealed=[SCENARIO], principal="eve")
    mcp = _Mcp(transport)
    seen: list[str] = []

    async def call(name: str, **arguments: Any) -> dict[str, Any]:
        answer = await mcp.call(name, arguments)
        seen.append(json.dumps(answer, sort_keys=True))
        structured: dict[str, Any] = answer.get("result", {}).get("structuredContent", {})
        return structured

    try:
        opened = await call("kestrel_session_open", scenario=SCENARIO, label="mcp")
        sid = opened["sessionId"]
        await call("kestrel_session_submit", sessionId=sid, source=f"buy 10 ACME\nadvance {CLOCK}")
        for uri in (f"kestrel://sessions/{sid}/frame", f"kestrel://sessions/{sid}/news"):
            seen.append(json.dumps(await mcp.rpc("resources/read", {"uri": uri}), sort_keys=True))
        await call("kestrel_session_list")
        await call("kestrel_session_close", sessionId=sid)
        await call("kestrel_session_submit", sessionId=sid, source="advance 1")
        grade = await call("kestrel_grade", sessionId=sid)
        await call("kestrel_session_list")
        await call("kestrel_proof", sessionId=sid)
        await call("kestrel_proof", sessionId=sid, embedTape=True)
        review = {"name": "kestrel_review_grade", "arguments": {"gradeRoot": grade["root"]}}
        seen.append(json.dumps(await mcp.rpc("prompts/get", review), sort_keys=True))
    finally:
        await transport.aclose()
    return seen


async def test_a_sealed_sessions_end_of_life_is_served_the_same_whatever_its_length(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    served: list[list[str]] = []
    for bars in (SHORT, LONG):
        _catalog(tmp_path / f"catalog-{bars}", bars)
        monkeypatch.setenv("KESTREL_CATALOG_PATH", str(tmp_path / f"catalog-{bars}"))
        home = tmp_path / f"home-{bars}"
        seen = await _sdk_served(home) + await _mcp_served(home)
        served.append([_renamed(s) for s in seen])
    short, long = served
    assert len(short) == len(long) >= 25
    for a, b in zip(short, long, strict=True):
        assert a == b
    said = "\n".join(short)
    assert "remaining" not in said  # no face says how many bars are left
    assert '"passed": true' in said  # the grade was made (its checks said), on both
    assert "SCENARIO_SEALED" in said  # a sealed proof embeds no tape
    assert "SESSION_CLOSED" in said  # a closed session takes no submission
