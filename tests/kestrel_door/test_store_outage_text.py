"""A SQLite store that fails under a running door tells a remote client only
``BACKEND_UNAVAILABLE: store unavailable`` (issue 45).

``kestrel-door serve`` answered ``503 the store /home/…/kestrel.db is unavailable: no
such table: sessions``: the store's path and SQLite's message, which the door's README
says a client never sees. Here another process breaks the store under a served door
(renames a table the runtime reads, answered at once, where a lock would wait out the
30 s busy timeout); every face (``/v1``, the SDK's remote transport, ``/mcp`` in both
eras) answers the outage refusal and nothing else, and the operator's log keeps the
path and the reason. The operator on their own home is still told both (the SDK's
``local_transport`` tests). The door's own store answering nothing about an approval is
the same outage, never a 500.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import httpx
import pytest
from kestrel_door import RequireApproval
from kestrel_protocol import KestrelError
from kestrel_protocol.outage import RETRY_AFTER_S, STORE_UNAVAILABLE
from kestrel_protocol.surface import SURFACE
from kestrel_sdk import remote_transport

from tests.reliability.support import door_process

from .conftest import Kit, asgi_client

pytestmark = pytest.mark.anyio

MODERN = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}
OUTAGE = {
    "code": "BACKEND_UNAVAILABLE",
    "message": STORE_UNAVAILABLE,
    "detail": {"retryAfter": RETRY_AFTER_S},
}


def _mcp(name: str, args: Any, modern: bool) -> tuple[dict[str, Any], dict[str, str]]:
    params: dict[str, Any] = {"name": name, "arguments": args}
    headers = {"Accept": "application/json, text/event-stream"}
    if modern:
        params["_meta"] = MODERN
        headers |= {
            "MCP-Protocol-Version": "2026-07-28",
            "Mcp-Method": "tools/call",
            "Mcp-Name": name,
        }
    return {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}, headers


async def test_a_broken_sqlite_store_shows_clients_only_store_unavailable(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    with door_process(home) as door:
        token = door.token("alice")
        auth = {"Authorization": f"Bearer {token}"}
        async with httpx.AsyncClient(base_url=door.base, headers=auth, timeout=60) as client:
            opened = await client.post("/v1/sessions", json={"scenario": "acme-trend"})
            sid = opened.json()["sessionId"]
            store = home / "kestrel.db"
            other = sqlite3.connect(store)  # another process breaks the store under the door
            other.execute("ALTER TABLE sessions RENAME TO sessions_gone")
            other.close()

            answers = {
                "v1 frame": await client.get(f"/v1/sessions/{sid}/frame"),
                "v1 submit": await client.post(
                    f"/v1/sessions/{sid}/submit", json={"source": "advance 1"}
                ),
            }
            for modern in (False, True):
                message, headers = _mcp("kestrel_session_frame", {"sessionId": sid}, modern)
                era = "2026-07-28" if modern else "legacy"
                answers[f"mcp {era}"] = await client.post("/mcp", json=message, headers=headers)
            for name, resp in answers.items():
                assert str(store) not in resp.text, (name, resp.text)
                assert "no such table" not in resp.text, (name, resp.text)
                assert resp.status_code == 503, (name, resp.text)
                assert resp.headers["Retry-After"] == str(RETRY_AFTER_S), name
                data = resp.json()
                refusal = data.get("refusal") or data["result"]["structuredContent"]["refusal"]
                assert refusal == OUTAGE, (name, data)

            transport = remote_transport(door.base, token, client=client)
            tool = SURFACE.tool("kestrel_session_frame")
            with pytest.raises(KestrelError) as raised:
                await transport.invoke(tool, tool.parse({"sessionId": sid}))
            assert raised.value.refusal.to_json() == OUTAGE
        # the operator's log keeps where the store is and what SQLite said
        log = door.log()
        assert str(store) in log
        assert "no such table: sessions" in log


async def test_approvals_that_cannot_be_read_are_an_outage_and_nothing_runs(
    kit: Kit, caplog: pytest.LogCaptureFixture
) -> None:
    """With an approval required, a door store that cannot answer whether it was given
    refuses the call as the outage (503 on ``/v1`` and ``/mcp``), never a 500, and the
    tool does not run."""
    policy = RequireApproval(kit.store, frozenset({"kestrel_session_close"}))
    app = kit.runtime_app(approval=policy)
    async with asgi_client(app, kit.token("alice")) as client:
        opened = await client.post("/v1/sessions", json={"scenario": "acme-trend"})
        sid = opened.json()["sessionId"]
        other = sqlite3.connect(kit.store.path)  # another process breaks the door's store
        other.execute("ALTER TABLE approvals RENAME TO approvals_gone")
        other.close()
        closed = await client.post(f"/v1/sessions/{sid}/close")
        message, headers = _mcp("kestrel_grade", {"sessionId": sid}, False)
        graded = await client.post("/mcp", json=message, headers=headers)
        frame = (await client.get(f"/v1/sessions/{sid}/frame")).json()["frame"]
    assert (closed.status_code, closed.json()["refusal"]) == (503, OUTAGE)
    assert graded.status_code == 503
    assert graded.json()["result"]["structuredContent"]["refusal"] == OUTAGE
    assert frame["status"] == "open"
    assert "no such table: approvals" in caplog.text
