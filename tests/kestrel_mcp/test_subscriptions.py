"""Subscriptions on a session's frame over the official ``mcp`` client and the real
``kestrel-mcp`` (stdio), handshake era (issue 50).

An agent that wanted to know when its session's frame changed had to poll: the
resources could not be subscribed to (``subscribe: false``, ``resources/subscribe``
unknown). Now ``initialize`` says ``resources.subscribe: true``; a client subscribed to
``kestrel://sessions/{id}/frame`` gets ``notifications/resources/updated`` for that URI
after each submit (and the close) that changes the frame, and reads the new frame
there; a refused submit, another session's submit and one whose subscription was
withdrawn send none. Subscribing to a session that does not exist is ``Resource not found``.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters, types
from mcp.shared.exceptions import MCPError

pytestmark = [
    pytest.mark.anyio,
    # resources/subscribe is a handshake-era method (2026-07-28 has subscriptions/listen)
    pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning"),
]


def _params(home: Path) -> StdioServerParameters:
    env = {**os.environ, "KESTREL_HOME": str(home), "KESTREL_SECRET_STORE": "file"}
    env.pop("KESTREL_REMOTE", None)
    return StdioServerParameters(
        command=sys.executable, args=["-m", "kestrel_mcp", "--home", str(home)], env=env
    )


async def _open(client: Client, label: str) -> str:
    opened = await client.call_tool(
        "kestrel_session_open", {"scenario": "acme-trend", "label": label}
    )
    assert opened.structured_content is not None
    return str(opened.structured_content["sessionId"])


async def test_a_subscribed_frame_is_announced_after_each_change_and_only_then(
    tmp_path: Path,
) -> None:
    updated: list[str] = []
    arrived = anyio.Event()

    async def on_message(message: object) -> None:
        nonlocal arrived
        if isinstance(message, types.ResourceUpdatedNotification):
            updated.append(str(message.params.uri))
            arrived.set()
            arrived = anyio.Event()

    async def announced(count: int) -> list[str]:
        """The URIs announced once ``count`` have arrived (the client hands each to its
        handler in a task of its own); then one more round trip for any stray one."""
        with anyio.fail_after(30):
            while len(updated) < count:
                await arrived.wait()
        await client.list_tools()
        return updated

    client = Client(_params(tmp_path / "home"), mode="legacy", message_handler=on_message)
    async with client:
        capabilities = client.server_capabilities
        assert capabilities is not None
        assert capabilities.resources is not None
        assert capabilities.resources.subscribe is True
        templates = await client.list_resource_templates()
        assert "kestrel://sessions/{id}/frame" in [
            t.uri_template for t in templates.resource_templates
        ]

        sid, other = await _open(client, "watched"), await _open(client, "other")
        uri = f"kestrel://sessions/{sid}/frame"
        await client.subscribe_resource(uri)

        async def submit(session: str, source: str) -> bool:
            result = await client.call_tool(
                "kestrel_session_submit", {"sessionId": session, "source": source}
            )
            return not result.is_error

        assert await submit(sid, "buy 5 ACME\nadvance 3")
        assert await announced(1) == [uri]
        frame = await client.read_resource(uri)
        [content] = frame.contents
        assert isinstance(content, types.TextResourceContents)
        assert json.loads(content.text)["frame"]["clock"]["bar"] == 3

        assert not await submit(sid, "buy -1 ACME")  # refused: the frame did not change
        assert await submit(other, "advance 7")  # another session's frame

        assert await submit(sid, "advance 2")
        closed = await client.call_tool("kestrel_session_close", {"sessionId": sid})
        assert not closed.is_error
        assert await announced(3) == [uri, uri, uri]  # none for the refused or the other

        await client.unsubscribe_resource(f"kestrel://sessions/{other}/frame")  # never subscribed
        await client.subscribe_resource(f"kestrel://sessions/{other}/frame")
        await client.unsubscribe_resource(f"kestrel://sessions/{other}/frame")
        assert await submit(other, "advance 1")
        assert await submit(sid, "advance 1") is False  # closed: refused, nothing changed
        assert await announced(3) == [uri, uri, uri]

        with pytest.raises(MCPError, match="Resource not found"):
            await client.subscribe_resource("kestrel://sessions/ks_" + "a" * 26 + "/frame")
