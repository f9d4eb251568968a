"""kestrel-mcp sends a submit's response as the text the runtime wrote.

The line's ``structuredContent`` is byte for byte the runtime's
:class:`~kestrel_protocol.Wire` text: the server builds no response object and dumps
none to JSON again. The text a model reads (the compact rendering) is unchanged.
"""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest
from kestrel_mcp import create_kestrel_mcp_server, serve_stdio
from kestrel_protocol import SessionResponse
from kestrel_protocol.surface import compact_text
from kestrel_sdk import local_transport

from tests.wire_watch import WireWatch

pytestmark = pytest.mark.anyio

INIT = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t"}},
}


async def test_a_submit_line_carries_the_runtimes_text_and_no_object_is_made(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = create_kestrel_mcp_server(local_transport(tmp_path / "home"), secrets=False)
    opened = await server.call_tool("kestrel_session_open", {"scenario": "acme-trend"})
    arguments = {"sessionId": opened["structuredContent"]["sessionId"], "source": "buy 5 ACME"}
    call = {"name": "kestrel_session_submit", "arguments": arguments}
    submit = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": call}
    requests = tmp_path / "requests.jsonl"
    requests.write_bytes(b"".join(json.dumps(m).encode() + b"\n" for m in (INIT, submit)))
    answers = tmp_path / "answers.jsonl"
    watch = WireWatch(monkeypatch)
    with requests.open("rb") as stdin, answers.open("wb") as stdout:
        with anyio.fail_after(20):
            await serve_stdio(server, stdin_fd=stdin.fileno(), stdout_fd=stdout.fileno())
    (text,) = watch.texts
    assert watch.responses_made == 0
    _, line = answers.read_bytes().splitlines()
    assert b'"structuredContent":' + text.encode() + b',"isError":false}}' in line
    response = SessionResponse.parse(json.loads(text))
    compact = compact_text(response, response.to_json())
    assert json.loads(line)["result"]["content"] == [{"type": "text", "text": compact}]
