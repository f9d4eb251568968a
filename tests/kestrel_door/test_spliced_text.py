"""The door's JSON faces send a submit's response as the text the runtime wrote.

``/mcp`` carries it as ``structuredContent`` and ``/v1`` as the body, byte for byte the
runtime's :class:`~kestrel_protocol.Wire` text: no face builds the response object or
dumps it to JSON again. The text a model reads (the compact rendering) is unchanged.
"""

from __future__ import annotations

import json

import pytest
from kestrel_protocol import SessionResponse
from kestrel_protocol.surface import compact_text

from tests.wire_watch import WireWatch

from .conftest import Kit, asgi_client

pytestmark = pytest.mark.anyio

ACCEPT = {"Accept": "application/json, text/event-stream"}


async def test_mcp_and_v1_send_the_runtimes_text_and_build_no_response_object(
    kit: Kit, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with asgi_client(kit.runtime_app(), kit.token(), **ACCEPT) as client:
        opened = await client.post("/v1/sessions", json={"scenario": "acme-trend"})
        sid = opened.json()["sessionId"]
        watch = WireWatch(monkeypatch)

        arguments = {"sessionId": sid, "source": "buy 10 ACME\nadvance 2\n"}
        call = {"name": "kestrel_session_submit", "arguments": arguments}
        message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": call}
        answered = await client.post("/mcp", json=message)
        assert answered.status_code == 200, answered.text
        (text,) = watch.texts
        assert b'"structuredContent":' + text.encode() + b',"isError":false}' in answered.content
        assert watch.responses_made == 0
        # The text a model reads is the rendering of the object's own data, as before.
        response = SessionResponse.parse(json.loads(text))
        compact = compact_text(response, response.to_json())
        assert answered.json()["result"]["content"] == [{"type": "text", "text": compact}]

        watch.clear()
        posted = await client.post(f"/v1/sessions/{sid}/submit", json={"source": "advance 1"})
        assert posted.status_code == 200, posted.text
        (text,) = watch.texts
        assert posted.content == text.encode()
        assert SessionResponse.parse(posted.json()).pentad.seq == 2
        assert watch.responses_made == 0
