"""The official ``mcp`` client over the door's ``/mcp`` (both eras): prompts, completion of
the caller's own grade roots, and progress on an SSE answer while a real grade runs."""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator
from typing import Any

import pytest
from kestrel_door import DoorConfig
from kestrel_sdk.runtime import grading as grading_module
from kestrel_sdk.runtime.engine import compute_grade
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import MCPError
from mcp_types import GetPromptResult, PromptReference, TextContent

from tests.loopback import serve

from .conftest import Kit

pytestmark = pytest.mark.anyio
MODES = [("legacy", "2025-11-25"), ("auto", "2026-07-28")]


@pytest.fixture
async def door_url(kit: Kit) -> AsyncIterator[str]:
    """The kit's door over a real runtime whose grade answers every 10 ms, holding one
    session in memory (a session it no longer holds is graded by replaying it)."""
    from kestrel_sdk import local_transport
    from kestrel_sdk.runtime import Runtime

    runtime = Runtime(kit.home / "runtime", grade_budget=0.01, max_live_sessions=1)
    holder: dict[str, Any] = {}

    async def app(scope: Any, receive: Any, send: Any) -> None:
        await holder["app"](scope, receive, send)

    async with serve(app) as url:
        holder["app"] = kit.app(
            config=DoorConfig(base_url=url),
            transport_for=lambda p: local_transport(principal=p, runtime=runtime),
        )
        yield url
    runtime.shutdown()


def _text(result: GetPromptResult) -> str:
    content = result.messages[0].content
    assert isinstance(content, TextContent)
    return content.text


def _client(url: str, token: str, mode: Any) -> tuple[Any, Client]:
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
    transport = streamable_http_client(url + "/mcp", http_client=http)
    return http, Client(transport, mode=mode, read_timeout_seconds=300)


@pytest.mark.parametrize(("mode", "era"), MODES)
async def test_prompts_progress_and_grade_completion_over_the_door(
    kit: Kit, door_url: str, mode: str, era: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[tuple[float, float | None, str | None]] = []
    shown = threading.Condition()  # notified as each progress value reaches the client

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        with shown:
            seen.append((progress, total, message))
            shown.notify_all()

    def held_grade(loaded: Any, record: Any, pentads: Any, progress: Any, **kwargs: Any) -> Any:
        """The real grade, paused after each replayed pentad until that progress has
        reached the client: a fast machine would otherwise finish between two polls."""

        def told(done: int, total: int) -> None:
            progress(done, total)
            if done > 0:
                with shown:
                    reached = shown.wait_for(lambda: any(d == done for d, _, _ in seen), 30)
                assert reached, f"progress {done} was not sent while the grade was paused"

        return compute_grade(loaded, record, pentads, told, **kwargs)

    monkeypatch.setattr(grading_module, "compute_grade", held_grade)

    http, client = _client(door_url, kit.token("alice"), mode)
    async with http, client:
        assert client.protocol_version == era
        names = [p.name for p in (await client.list_prompts()).prompts]
        assert names == ["kestrel_trade_scenario", "kestrel_review_grade"]
        brief = await client.get_prompt("kestrel_trade_scenario", {"scenario": "minute-200k"})
        assert "minute-200k" in _text(brief)
        with pytest.raises(MCPError) as caught:
            await client.get_prompt("kestrel_trade_scenario", {})
        assert caught.value.error.code == -32602
        assert "scenario: is required" in caught.value.error.message

        opened = await client.call_tool("kestrel_session_open", {"scenario": "minute-200k"})
        sid = opened.structured_content["sessionId"]
        for source in ("buy 10 ACME\nadvance 100000", "advance 99990"):  # two pentads
            await client.call_tool("kestrel_session_submit", {"sessionId": sid, "source": source})
        # closed, then out of memory (the next session takes its place): its grade replays
        await client.call_tool("kestrel_session_close", {"sessionId": sid})
        other = await client.call_tool("kestrel_session_open", {"scenario": "acme-trend"})
        other_sid = other.structured_content["sessionId"]
        await client.call_tool("kestrel_session_frame", {"sessionId": other_sid})
        graded = await client.call_tool(
            "kestrel_grade", {"sessionId": sid}, progress_callback=on_progress
        )
        grade = graded.structured_content
        assert grade["kind"] == "kestrel.grade"
        assert len(seen) > 1, seen
        assert [d for d, _, _ in seen] == sorted({d for d, _, _ in seen})

        ref = PromptReference(type="ref/prompt", name="kestrel_review_grade")
        mine = await client.complete(ref, {"name": "gradeRoot", "value": ""})
        assert mine.completion.values == [grade["root"]]
        review = await client.get_prompt("kestrel_review_grade", {"gradeRoot": grade["root"]})
        assert grade["root"] in _text(review)

    # Another principal is offered none of alice's grades.
    http, client = _client(door_url, kit.token("bob"), mode)
    async with http, client:
        theirs = await client.complete(ref, {"name": "gradeRoot", "value": ""})
        assert theirs.completion.values == []
