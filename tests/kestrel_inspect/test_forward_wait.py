"""An evaluation on a forward scenario waits for bars instead of failing (issue 47).

The harness's submit tool asks the face to wait (the tool's ``wait``, 30 seconds, unless
the model gave one or wrote one in its source) and submits again while
``BAR_NOT_PUBLISHED`` comes back, a bounded number of times; the offline agents
submit again after such a refusal instead of stopping, and stop (their session graded
as it stands) once their patience is spent. Any other refusal still stops at once.
"""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest
from inspect_ai.model import ChatMessage, ChatMessageAssistant, ChatMessageTool, ChatMessageUser
from inspect_ai.tool import Tool, ToolCall, ToolCallError, ToolDef, ToolError
from kestrel_inspect import NOT_PUBLISHED, WAIT_SECONDS, next_call, waiting_submit
from kestrel_inspect.scripted import PATIENCE

SUBMIT = "kestrel_session_submit"


def _refusal(code: str) -> str:
    return json.dumps({"refusal": {"code": code, "message": "bar 8 is not published yet"}})


class Face:
    """A submit tool whose first ``refusals`` calls are refused ``code``."""

    def __init__(self, refusals: int, code: str = NOT_PUBLISHED) -> None:
        self.refusals, self.code = refusals, code
        self.calls: list[dict[str, Any]] = []

    def tool(self) -> Tool:
        async def submit(sessionId: str, source: str, wait: float | None = None) -> str:
            self.calls.append({"sessionId": sessionId, "source": source, "wait": wait})
            if len(self.calls) <= self.refusals:
                raise ToolError(_refusal(self.code))
            return f"submission {len(self.calls)} accepted"

        params = {"sessionId": "the session", "source": "the statements", "wait": "seconds"}
        return ToolDef(submit, name=SUBMIT, description="Submit.", parameters=params).as_tool()


def _call(tool: Tool, **arguments: Any) -> Any:
    async def run() -> Any:
        return await tool(**arguments)

    return anyio.run(run)


def test_a_submit_past_the_edge_waits_and_is_submitted_again() -> None:
    face = Face(refusals=2)
    source = "buy 5 ACME\nadvance 1"
    done = _call(waiting_submit(face.tool()), sessionId="ks_1", source=source)
    assert done == "submission 3 accepted"
    asked = {"sessionId": "ks_1", "source": source, "wait": WAIT_SECONDS}
    assert face.calls == [asked] * 3
    assert ToolDef(waiting_submit(face.tool())).name == SUBMIT  # the model sees the same tool


def test_the_model_s_own_wait_is_kept_and_the_retries_are_bounded() -> None:
    face = Face(refusals=10)
    tool = waiting_submit(face.tool(), 5.0, 2)
    with pytest.raises(ToolError) as raised:
        _call(tool, sessionId="ks_1", source="advance 1", wait=1)
    assert NOT_PUBLISHED in raised.value.message
    # once and twice again, then said; the model's wait as it gave it
    assert [c["wait"] for c in face.calls] == [1, 1, 1]
    written = Face(refusals=0)
    _call(waiting_submit(written.tool()), sessionId="ks_1", source="advance 1 WAIT 1s")
    assert written.calls == [{"sessionId": "ks_1", "source": "advance 1 WAIT 1s", "wait": None}]
    with pytest.raises(ValueError, match="from 1ms to 300s"):
        waiting_submit(face.tool(), 301)


def test_another_refusal_is_not_submitted_again() -> None:
    face = Face(refusals=1, code="INVALID_ARGUMENT")
    with pytest.raises(ToolError, match="INVALID_ARGUMENT"):
        _call(waiting_submit(face.tool()), sessionId="ks_1", source="buy x")
    assert len(face.calls) == 1


def _conversation(refusals: int, code: str = NOT_PUBLISHED) -> list[ChatMessage]:
    """The momentum agent's conversation on a forward scenario: opened, bar 0 read, one
    ``advance 20`` submitted and refused ``refusals`` times in a row."""
    frame = (
        "frame 1 of ks_1 on fwd-acme: open, bar 0 (2024-01-02T00:00:00Z)\n"
        "marks: ACME 100.00\naccount: equity 100000.00, cash 100000.00\npositions: none"
    )
    messages: list[ChatMessage] = [ChatMessageUser(content="Trade the Kestrel scenario fwd-acme.")]
    calls = [
        ("kestrel_session_open", {"scenario": "fwd-acme"}, json.dumps({"sessionId": "ks_1"})),
        ("kestrel_session_frame", {"sessionId": "ks_1"}, frame),
    ]
    for n, (function, arguments, text) in enumerate(calls):
        messages.append(
            ChatMessageAssistant(content="", tool_calls=[ToolCall(str(n), function, arguments)])
        )
        messages.append(ChatMessageTool(content=text, tool_call_id=str(n), function=function))
    submit = {"sessionId": "ks_1", "source": "advance 20"}
    for n in range(refusals):
        call_id = f"s{n}"
        messages.append(
            ChatMessageAssistant(content="", tool_calls=[ToolCall(call_id, SUBMIT, submit)])
        )
        error = ToolCallError("unknown", _refusal(code))
        messages.append(
            ChatMessageTool(content="", tool_call_id=call_id, function=SUBMIT, error=error)
        )
    return messages


@pytest.mark.parametrize("strategy", ["momentum", "hold"])
def test_the_offline_agents_submit_again_while_the_bar_is_not_published(strategy: str) -> None:
    for refusals in range(1, PATIENCE + 1):
        output = next_call(strategy, _conversation(refusals), 20)
        [call] = output.message.tool_calls or []
        assert (call.function, call.arguments) == (
            SUBMIT,
            {"sessionId": "ks_1", "source": "advance 20"},
        )
    spent = next_call(strategy, _conversation(PATIENCE + 1), 20)
    assert not spent.message.tool_calls
    assert NOT_PUBLISHED in spent.message.text


def test_the_offline_agents_stop_at_any_other_refusal() -> None:
    output = next_call("momentum", _conversation(1, "INVALID_ARGUMENT"), 20)
    assert not output.message.tool_calls
    assert "INVALID_ARGUMENT" in output.message.text
