from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pytest
from kestrel_protocol.ports import LiveTurn, RunContext

from .conftest import Kit, asgi_client

pytestmark = pytest.mark.anyio

ACCEPT = {"Accept": "application/json, text/event-stream"}


def _req(method: str, params: dict[str, Any] | None = None, rid: int = 1) -> dict[str, Any]:
    out: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
    if params is not None:
        out["params"] = params
    return out


async def test_legacy_handshake_list_and_call(kit: Kit) -> None:
    async with asgi_client(kit.app(), kit.token(), **ACCEPT) as client:
        init = await client.post(
            "/mcp",
            json=_req(
                "initialize",
                {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "t", "version": "1"},
                },
            ),
        )
        assert init.status_code == 200
        assert init.json()["result"]["protocolVersion"] == "2025-06-18"
        note = await client.post(
            "/mcp", json={"jsonrpc": "2.0", "method": "notifications/initialized"}
        )
        assert note.status_code == 202
        assert note.content == b""
        headers = {"MCP-Protocol-Version": "2025-06-18"}
        listed = await client.post("/mcp", json=_req("tools/list", {}), headers=headers)
        names = [t["name"] for t in listed.json()["result"]["tools"]]
        assert "kestrel_session_open" in names
        assert not [n for n in names if n.startswith("kestrel_secrets")]
        opened = await client.post(
            "/mcp",
            json=_req(
                "tools/call",
                {"name": "kestrel_session_open", "arguments": {"scenario": "acme-trend"}},
            ),
            headers=headers,
        )
        result = opened.json()["result"]
        assert result["isError"] is False
        sid = result["structuredContent"]["sessionId"]
        dotted = await client.post(
            "/mcp",
            json=_req(
                "tools/call", {"name": "kestrel.session.frame", "arguments": {"sessionId": sid}}
            ),
        )
        assert dotted.json()["result"]["structuredContent"]["frame"]["session"] == sid
        refused = await client.post(
            "/mcp",
            json=_req(
                "tools/call", {"name": "kestrel_session_frame", "arguments": {"sessionId": "ks_x"}}
            ),
        )
        body = refused.json()["result"]
        assert body["isError"] is True
        assert body["structuredContent"]["refusal"]["code"] == "UNKNOWN_SESSION"


async def test_secrets_tools_are_never_served(kit: Kit) -> None:
    async with asgi_client(kit.app(), kit.token(), **ACCEPT) as client:
        for name in ("kestrel_secrets_set", "kestrel_secrets_list", "kestrel.secrets.unset"):
            resp = await client.post(
                "/mcp",
                json=_req("tools/call", {"name": name, "arguments": {"key": "A", "value": "b"}}),
            )
            assert resp.json()["error"]["code"] == -32602
    # even a host turn's tools never get asked for them
    tools = _RecordingTools()
    dispose = kit.creds.publish("t", LiveTurn(RunContext("harness", "present", "host"), tools))
    token = kit.creds.mint("t")
    async with asgi_client(kit.app(), token, **ACCEPT) as client:
        resp = await client.post("/mcp", json=_req("tools/call", {"name": "kestrel_secrets_list"}))
        assert resp.json()["error"]["code"] == -32602
    assert tools.calls == []
    dispose()


async def test_bad_arguments_are_32602_for_a_grant_and_never_reach_a_host_turn(kit: Kit) -> None:
    """Arguments are checked once whoever runs the tool: the door's own tools for a
    grant, the face itself for a host turn's tools (which may check nothing)."""
    bad = _req("tools/call", {"name": "kestrel_session_frame", "arguments": {"sessionId": 5}})
    async with asgi_client(kit.app(), kit.token(), **ACCEPT) as client:
        error = (await client.post("/mcp", json=bad)).json()["error"]
    assert error["code"] == -32602
    assert error["data"]["refusal"]["detail"]["errors"][0]["path"] == "sessionId"
    tools = _RecordingTools()
    dispose = kit.creds.publish("t", LiveTurn(RunContext("harness", "present", "host"), tools))
    async with asgi_client(kit.app(), kit.creds.mint("t"), **ACCEPT) as client:
        assert (await client.post("/mcp", json=bad)).json()["error"] == error
    assert tools.calls == []
    dispose()


async def test_get_and_delete_are_405_and_accept_is_checked(kit: Kit) -> None:
    async with asgi_client(kit.app(), kit.token()) as client:
        assert (await client.get("/mcp")).status_code == 405
        assert (await client.delete("/mcp")).status_code == 405
        resp = await client.post("/mcp", json=_req("ping"), headers={"Accept": "text/html"})
        assert resp.status_code == 406
        resp = await client.post(
            "/mcp", content=b"{}", headers={"Content-Type": "text/plain", **ACCEPT}
        )
        assert resp.status_code == 415
        resp = await client.post(
            "/mcp", content=b"{nope", headers={"Content-Type": "application/json", **ACCEPT}
        )
        assert resp.status_code == 400
        assert resp.json()["error"]["code"] == -32700
        resp = await client.post(
            "/mcp", json=_req("ping"), headers={"MCP-Protocol-Version": "1999-01-01", **ACCEPT}
        )
        assert resp.status_code == 400
        assert resp.json()["error"]["code"] == -32022
        assert resp.json()["id"] == 1  # errors carry the request's id when it is readable
        assert "2026-07-28" in resp.json()["error"]["data"]["supported"]


async def test_legacy_batch(kit: Kit) -> None:
    async with asgi_client(kit.app(), kit.token(), **ACCEPT) as client:
        resp = await client.post(
            "/mcp",
            json=[
                _req("ping", rid=1),
                {"jsonrpc": "2.0", "method": "notifications/x"},
                _req("ping", rid=2),
            ],
        )
        assert sorted(m["id"] for m in resp.json()) == [1, 2]


def _modern(method: str, params: dict[str, Any], rid: int = 7) -> dict[str, Any]:
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    return _req(method, {**params, "_meta": meta}, rid)


async def test_a_malformed_modern_request_is_refused_as_malformed_not_for_its_envelope(
    kit: Kit,
) -> None:
    # as stdio refuses the same message: its fault named, not the era's envelope asked for
    headers = {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "ping", **ACCEPT}
    async with asgi_client(kit.app(), kit.token()) as client:
        for message, why in (
            ({**_req("ping"), "id": 1.5}, 'member "id" must be a string or an integer, not 1.5'),
            ({**_req("ping", rid=3), "jsonrpc": "1.0"}, 'member "jsonrpc" must be "2.0"'),
        ):
            resp = await client.post("/mcp", json=message, headers=headers)
            assert resp.status_code == 400
            assert resp.json()["error"] == {"code": -32600, "message": why}
        # a well-formed one without its envelope is still refused for it
        resp = await client.post("/mcp", json=_req("ping", rid=4), headers=headers)
        assert resp.json()["error"]["code"] == -32602


async def test_modern_era_header_rules(kit: Kit) -> None:
    ok_headers = {
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": "tools/call",
        "Mcp-Name": "kestrel_catalog",
        **ACCEPT,
    }
    body = _modern("tools/call", {"name": "kestrel_catalog", "arguments": {}})
    async with asgi_client(kit.app(), kit.token()) as client:
        resp = await client.post("/mcp", json=body, headers=ok_headers)
        assert resp.status_code == 200, resp.text
        assert resp.json()["result"]["resultType"] == "complete"
        assert resp.json()["result"]["structuredContent"]["kind"] == "kestrel.catalog"
        wrong_method = {**ok_headers, "Mcp-Method": "tools/list"}
        resp = await client.post("/mcp", json=body, headers=wrong_method)
        assert resp.status_code == 400
        assert resp.json()["error"]["code"] == -32020
        wrong_name = {**ok_headers, "Mcp-Name": "kestrel_grade"}
        resp = await client.post("/mcp", json=body, headers=wrong_name)
        assert resp.json()["error"]["code"] == -32020
        no_meta = _req("tools/call", {"name": "kestrel_catalog", "arguments": {}})
        resp = await client.post("/mcp", json=no_meta, headers=ok_headers)
        assert resp.status_code == 400
        assert resp.json()["error"]["code"] == -32602
        missing = {k: v for k, v in ok_headers.items() if k != "Mcp-Method"}
        resp = await client.post("/mcp", json=body, headers=missing)
        assert resp.status_code == 400
        headerless = await client.post("/mcp", json=body, headers=ACCEPT)
        assert headerless.status_code == 400
        assert headerless.json()["error"]["code"] == -32020
        encoded = {**ok_headers, "Mcp-Name": "=?base64?a2VzdHJlbF9jYXRhbG9n?="}
        resp = await client.post("/mcp", json=body, headers=encoded)
        assert resp.status_code == 200, resp.text
        bad_b64 = {**ok_headers, "Mcp-Name": "=?base64?!!!?="}
        assert (await client.post("/mcp", json=body, headers=bad_b64)).status_code == 400
        ping = await client.post(
            "/mcp",
            json=_modern("ping", {}),
            headers={"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "ping", **ACCEPT},
        )
        assert ping.status_code == 404
        assert ping.json()["error"]["code"] == -32601
        discover = _modern("server/discover", {})
        resp = await client.post(
            "/mcp",
            json=discover,
            headers={
                "MCP-Protocol-Version": "2026-07-28",
                "Mcp-Method": "server/discover",
                **ACCEPT,
            },
        )
        assert "2026-07-28" in resp.json()["result"]["supportedVersions"]
        unknown = _modern("nope/nope", {})
        resp = await client.post(
            "/mcp",
            json=unknown,
            headers={"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "nope/nope", **ACCEPT},
        )
        assert resp.status_code == 404
        assert resp.json()["error"]["code"] == -32601


async def test_insufficient_scope_over_mcp_is_403_with_challenge(kit: Kit) -> None:
    async with asgi_client(kit.app(), kit.token("alice", ("kestrel:read",)), **ACCEPT) as client:
        resp = await client.post(
            "/mcp",
            json=_req(
                "tools/call",
                {"name": "kestrel_session_open", "arguments": {"scenario": "acme-trend"}},
            ),
        )
    assert resp.status_code == 403
    assert 'error="insufficient_scope"' in resp.headers["www-authenticate"]
    assert resp.json()["result"]["structuredContent"]["refusal"]["code"] == "FORBIDDEN"


@dataclass
class _RecordingTools:
    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    answer: dict[str, Any] = field(
        default_factory=lambda: {
            "content": [{"type": "text", "text": "{}"}],
            "structuredContent": {"from": "the turn"},
            "isError": False,
        }
    )

    async def call(self, name: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
        self.calls.append((name, dict(arguments)))
        return self.answer


async def test_turn_credential_calls_go_to_the_turn_and_door_adds_no_permission(kit: Kit) -> None:
    tools = _RecordingTools()
    # The turn's context has NO scopes: the door must not check its own scopes here,
    # nor add any: whatever the turn's tools answer is the answer.
    turn = LiveTurn(RunContext("harness", "present", "host-user", frozenset()), tools)
    dispose = kit.creds.publish("thread-1", turn)
    token = kit.creds.mint("thread-1")
    assert token is not None
    app = kit.app()
    async with asgi_client(app, token, **ACCEPT) as client:
        resp = await client.post(
            "/mcp",
            json=_req(
                "tools/call",
                {"name": "kestrel_session_open", "arguments": {"scenario": "acme-trend"}},
            ),
        )
        assert resp.json()["result"]["structuredContent"] == {"from": "the turn"}
        tools.answer = {
            "content": [],
            "structuredContent": {
                "refusal": {"code": "FORBIDDEN", "message": "turn says no", "detail": {}}
            },
            "isError": True,
        }
        resp = await client.get("/v1/catalog")
        assert resp.status_code == 403
        assert resp.json()["refusal"]["message"] == "turn says no"
    assert [c[0] for c in tools.calls] == ["kestrel_session_open", "kestrel_catalog"]
    assert tools.calls[0][1] == {"scenario": "acme-trend"}
    # The door wrote no audit row of its own for the turn's calls.
    assert kit.audit.rows() == []
    assert kit.sessions.opened == 0
    dispose()
    async with asgi_client(app, token, **ACCEPT) as client:
        assert (await client.post("/mcp", json=_req("ping"))).status_code == 401


async def test_real_mcp_face_behind_the_door(kit: Kit, tmp_path: Any) -> None:
    """The door's MCP face over the real runtime: handshake, tools, resources; no secrets."""
    from kestrel_sdk import local_transport

    owner: Any = local_transport(home=tmp_path / "rt")
    app = kit.app(transport_for=lambda p: local_transport(principal=p, runtime=owner.runtime))
    try:
        async with asgi_client(app, kit.token("alice"), **ACCEPT) as client:
            init = await client.post(
                "/mcp",
                json=_req(
                    "initialize",
                    {
                        "protocolVersion": "2025-11-25",
                        "capabilities": {},
                        "clientInfo": {"name": "t", "version": "1"},
                    },
                ),
            )
            assert init.json()["result"]["protocolVersion"] == "2025-11-25"
            listed = await client.post("/mcp", json=_req("tools/list", {}, rid=2))
            names = [t["name"] for t in listed.json()["result"]["tools"]]
            assert "kestrel_grade" in names
            assert not [n for n in names if "secrets" in n]
            read = await client.post(
                "/mcp", json=_req("resources/read", {"uri": "kestrel://catalog"}, rid=3)
            )
            contents = read.json()["result"]["contents"]
            assert '"kestrel.catalog"' in contents[0]["text"]
            secret = await client.post(
                "/mcp",
                json=_req("tools/call", {"name": "kestrel_secrets_list", "arguments": {}}, rid=4),
            )
            assert secret.json()["error"]["code"] == -32602
    finally:
        await owner.aclose()


async def test_modern_disconnect_cancels_the_call(kit: Kit) -> None:
    import json

    import anyio

    cancelled: list[bool] = []

    class _SlowTools:
        async def call(self, name: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
            try:
                await anyio.sleep(30)
            except anyio.get_cancelled_exc_class():
                cancelled.append(True)
                raise
            return {}

    turn = LiveTurn(RunContext("harness", "present", "host"), _SlowTools())
    kit.creds.publish("slow", turn)
    token = kit.creds.mint("slow")
    assert token is not None
    body = json.dumps(_modern("tools/call", {"name": "kestrel_catalog", "arguments": {}})).encode()
    headers = {
        "host": "127.0.0.1:8787",
        "authorization": f"Bearer {token}",
        "content-type": "application/json",
        "accept": "application/json",
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": "tools/call",
        "mcp-name": "kestrel_catalog",
    }
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/mcp",
        "raw_path": b"/mcp",
        "query_string": b"",
        "root_path": "",
        "headers": [(k.encode(), v.encode()) for k, v in headers.items()],
        "client": ("127.0.0.1", 1),
        "server": ("127.0.0.1", 8787),
    }
    messages = [{"type": "http.request", "body": body, "more_body": False}]

    async def receive() -> dict[str, Any]:
        if messages:
            return messages.pop()
        await anyio.sleep(0.2)  # the client goes away while the call runs
        return {"type": "http.disconnect"}

    sent: list[Any] = []

    async def send(message: Any) -> None:
        sent.append(message)

    with anyio.fail_after(5):
        await kit.app()(scope, receive, send)
    assert cancelled == [True]
