from __future__ import annotations

from typing import Any

import pytest
from kestrel_door import DoorTurnTools
from kestrel_protocol.ports import RunContext, TurnTools
from kestrel_protocol.surface import ArgumentError

from .conftest import Kit

pytestmark = pytest.mark.anyio


def _tools(kit: Kit, scopes: set[str]) -> DoorTurnTools:
    ctx = RunContext("http", "present", "alice", frozenset(scopes))
    return DoorTurnTools(ctx, kit.transport_for("alice"), audit=kit.audit)


async def test_is_a_turn_tools(kit: Kit) -> None:
    assert isinstance(_tools(kit, set()), TurnTools)


@pytest.mark.parametrize(
    ("tool", "arguments", "scope"),
    [
        ("kestrel_catalog", {}, "kestrel:read"),
        ("kestrel_session_open", {"scenario": "acme-trend"}, "kestrel:trade"),
        ("kestrel_grade", {"sessionId": "ks_x"}, "kestrel:grade"),
        ("kestrel.operation.resume", {"token": "t"}, "kestrel:grade"),
    ],
)
async def test_each_tool_needs_its_scope(
    kit: Kit, tool: str, arguments: dict[str, Any], scope: str
) -> None:
    result = await _tools(kit, set()).call(tool, arguments)
    assert result["isError"] is True
    refusal = result["structuredContent"]["refusal"]
    assert refusal["code"] == "FORBIDDEN"
    assert refusal["detail"]["requiredScope"] == scope
    allowed = await _tools(kit, {scope}).call(tool, arguments)
    code = allowed["structuredContent"].get("refusal", {}).get("code")
    assert code != "FORBIDDEN"


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("kestrel_secrets_set", {"key": "A", "value": "b"}),
        ("nope", {}),
        ("kestrel_session_submit", {"sessionId": "ks_x"}),
        ("kestrel_session_submit", {"sessionId": 5, "source": "x"}),
        ("kestrel_session_open", {"scenario": "acme-trend", "payment": {"offerId": 1}}),
    ],
)
async def test_unknown_tools_and_bad_arguments_raise_and_are_audited(
    kit: Kit, tool: str, arguments: dict[str, Any]
) -> None:
    tools = _tools(kit, {"kestrel:read", "kestrel:trade", "kestrel:grade"})
    with pytest.raises(ArgumentError):
        await tools.call(tool, arguments)
    assert kit.audit.rows()[-1].outcome == "invalid-arguments"


async def test_results_have_the_mcp_face_shape(kit: Kit) -> None:
    tools = _tools(kit, {"kestrel:read", "kestrel:trade"})
    opened = await tools.call("kestrel_session_open", {"scenario": "acme-trend"})
    assert opened["isError"] is False
    assert opened["structuredContent"] == {"gated": False, "sessionId": "ks_fake0001"}
    assert opened["content"] == [
        {"type": "text", "text": '{"gated":false,"sessionId":"ks_fake0001"}'}
    ]
