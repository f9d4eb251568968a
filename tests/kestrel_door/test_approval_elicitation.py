"""Approvals asked through MCP elicitation (issue 50): a host that can ask its user is
asked, instead of its agent being told to retry after an operator's grant.

A door that requires approval of ``kestrel_session_close``, and the official ``mcp``
client in the 2026-07-28 era with an elicitation callback: the close is asked of the
client (``elicitation/create``, naming the tool); ``accept`` closes the session once
(the next close needs another yes), ``decline`` and ``cancel`` get the in-band
``APPROVAL_REQUIRED`` refusal and leave the session open. A client without the
capability, and any handshake-era client, still gets the in-band refusal.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from kestrel_door import RequireApproval
from kestrel_door.door_tools import APPROVAL_MESSAGE
from mcp import Client, types
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from tests.doors import Door, serve_door

from .conftest import Kit, asgi_client

pytestmark = pytest.mark.anyio

CLOSE = "kestrel_session_close"


async def _session_and_close(
    door: Door, mode: str, answer: str | None, asked: list[str]
) -> tuple[Any, Any]:
    """Open a session, then close it: the close's result and the frame after it."""

    async def elicit(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        assert answer is not None
        return types.ElicitResult(action=answer)

    http = create_mcp_http_client(headers={"Authorization": f"Bearer {door.token}"})
    transport = streamable_http_client(door.url + "/mcp", http_client=http)
    callback = elicit if answer is not None else None
    async with http, Client(transport, mode=mode, elicitation_callback=callback) as client:
        opened = await client.call_tool("kestrel_session_open", {"scenario": "acme-chop"})
        sid = opened.structured_content["sessionId"]
        closed = await client.call_tool(CLOSE, {"sessionId": sid})
        frame = await client.call_tool("kestrel_session_frame", {"sessionId": sid})
        again = None
        if not closed.is_error:  # a yes is for one call: the next one is asked again
            asked_before = len(asked)
            other = await client.call_tool(
                "kestrel_session_open", {"scenario": "acme-chop", "label": "second"}
            )
            second = other.structured_content["sessionId"]
            again = await client.call_tool(CLOSE, {"sessionId": second})
            assert len(asked) == asked_before + 1
    return closed, (frame, again)


def _refused(result: Any) -> bool:
    refusal = (result.structured_content or {}).get("refusal", {})
    return (
        bool(result.is_error)
        and refusal.get("code") == "APPROVAL_REQUIRED"
        and (refusal.get("message") == APPROVAL_MESSAGE and refusal["detail"]["tool"] == CLOSE)
    )


async def test_an_elicitation_capable_client_is_asked_and_its_answer_holds_once(
    tmp_path: Path,
) -> None:
    with serve_door(
        tmp_path / "door", "--require-approval", CLOSE, "--approve-by-elicitation"
    ) as door:
        asked: list[str] = []
        closed, (frame, again) = await _session_and_close(door, "auto", "accept", asked)
        assert not closed.is_error, closed
        assert closed.structured_content["kind"] == "kestrel.session"
        assert frame.structured_content["frame"]["status"] == "closed"
        assert CLOSE in asked[0]
        assert again is not None
        assert not again.is_error  # asked again, accepted again

        for answer in ("decline", "cancel"):
            asked = []
            closed, (frame, _) = await _session_and_close(door, "auto", answer, asked)
            assert len(asked) == 1
            assert _refused(closed), closed
            assert frame.structured_content["frame"]["status"] == "open"


async def test_by_default_a_client_that_can_elicit_cannot_approve_itself(
    tmp_path: Path,
) -> None:
    """The operator's approval is the operator's: an agent whose own client declares
    elicitation and answers ``accept`` is not asked and is refused in-band, unless the
    door was started with ``--approve-by-elicitation``."""
    with serve_door(tmp_path / "door", "--require-approval", CLOSE) as door:
        asked: list[str] = []
        closed, (frame, _) = await _session_and_close(door, "auto", "accept", asked)
        assert asked == []
        assert _refused(closed), closed
        assert frame.structured_content["frame"]["status"] == "open"


async def test_without_elicitation_the_refusal_stays_in_band(tmp_path: Path) -> None:
    with serve_door(
        tmp_path / "door", "--require-approval", CLOSE, "--approve-by-elicitation"
    ) as door:
        # a handshake-era client declares elicitation only in a handshake the door does
        # not keep: it is never asked
        for mode, answer in (("auto", None), ("legacy", None), ("legacy", "accept")):
            asked: list[str] = []
            closed, (frame, _) = await _session_and_close(door, mode, answer, asked)
            assert _refused(closed), (mode, closed)
            assert frame.structured_content["frame"]["status"] == "open"
            assert asked == []


ELICITING = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
}


async def test_an_accept_counts_only_for_the_call_the_door_asked_about(kit: Kit) -> None:
    """An agent that writes its own ``accept`` (no state, a forged one, or the state of
    another session's close) is refused in-band; the session stays open."""
    app = kit.runtime_app(
        approval=RequireApproval(kit.store, frozenset({CLOSE})),
        config=replace(kit.config, approve_by_elicitation=True),
    )
    async with asgi_client(app, kit.token("alice")) as client:

        async def close(sid: str, **extra: Any) -> dict[str, Any]:
            params = {"name": CLOSE, "arguments": {"sessionId": sid}, "_meta": ELICITING}
            message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call"}
            headers = {
                "Accept": "application/json, text/event-stream",
                "MCP-Protocol-Version": "2026-07-28",
                "Mcp-Method": "tools/call",
                "Mcp-Name": CLOSE,
            }
            sent = {**message, "params": {**params, **extra}}
            answer = (await client.post("/mcp", json=sent, headers=headers)).json()
            result: dict[str, Any] = answer["result"]
            return result

        async def opened() -> str:
            made = await client.post("/v1/sessions", json={"scenario": "acme-trend"})
            return str(made.json()["sessionId"])

        mine, theirs = await opened(), await opened()
        asked = await close(mine)
        assert asked["resultType"] == "input_required"
        [request] = asked["inputRequests"].values()
        assert request["method"] == "elicitation/create"
        accept = {"inputResponses": {"approval": {"action": "accept"}}}
        for extra in (
            accept,
            {**accept, "requestState": "0" * 64},
            {**accept, "requestState": asked["requestState"]},  # asked about another session
        ):
            refused = await close(theirs, **extra)
            assert refused["isError"] is True
            assert refused["structuredContent"]["refusal"]["code"] == "APPROVAL_REQUIRED"
        frame = await client.get(f"/v1/sessions/{theirs}/frame")
        assert frame.json()["frame"]["status"] == "open"
        granted = await close(mine, **accept, requestState=asked["requestState"])
        assert granted.get("isError") is not True
        assert granted["structuredContent"]["kind"] == "kestrel.session"
