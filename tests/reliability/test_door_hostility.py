"""Door hostility: every kind of unwelcome request gets the right status and stores nothing.

Promise (issue 7.5, spec 10/12): the door rejects every request without a valid
credential (issued token, turn credential or OAuth JWT), one principal can never read
or drive another's session, missing scopes are 403 ``insufficient_scope``, a rebound
Host or a foreign Origin is refused, bodies past the limit are 413 and slow bodies are
cut off by the timeout. After each, the runtime's database (sessions, journal,
artifacts) is exactly as before, the victim's frame has not moved, and a request the
door refused before authentication left no audit row either.

The door here is the real app over the real runtime (wired as ``kestrel-door serve``
wires it), served by uvicorn on 127.0.0.1, with a real JWKS issuer on loopback.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
import socket
import sqlite3
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from types import ModuleType
from typing import Any

import anyio
import httpx
import pytest
from joserfc import jwt
from joserfc.jwk import RSAKey
from kestrel_door import (
    DoorConfig,
    DoorTurnTools,
    JwtGrantVerifier,
    TurnCredentials,
    create_turn_credentials,
)
from kestrel_protocol.ports import LiveTurn, RunContext
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from tests.doors import MCP_HEADERS

pytestmark = pytest.mark.anyio

ISSUER = "https://issuer.reliability.test"
ALL = frozenset({"kestrel:read", "kestrel:trade", "kestrel:grade"})


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


class Clock:
    def __init__(self) -> None:
        self.ms = 1_000_000.0

    def __call__(self) -> float:
        return self.ms


@dataclass
class Hostile:
    door: Any  # support.LiveDoor
    audience: str
    key: RSAKey
    creds: TurnCredentials
    clock: Clock
    alice: str  # alice's full-scope token
    sid: str  # alice's session
    db: Path

    def jwt(self, **overrides: Any) -> str:
        now = int(time.time())
        claims: dict[str, Any] = {
            "iss": ISSUER,
            "sub": "oauth-agent",
            "aud": self.audience,
            "exp": now + 300,
            "iat": now,
            "scope": "kestrel:read kestrel:trade kestrel:grade",
        }
        claims.update(overrides)
        return jwt.encode({"alg": "RS256", "kid": "k1"}, claims, self.key)

    def snapshot(self) -> dict[str, Any]:
        with sqlite3.connect(self.db, timeout=30) as con:
            counts = {
                table: con.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
                for table in ("sessions", "journal", "artifacts")
            }
            counts["session rows"] = con.execute(
                "SELECT id, principal, status FROM sessions ORDER BY id"
            ).fetchall()
        con.close()
        return counts

    async def frame_root(self) -> str:
        async with self.door.client(self.alice) as client:
            got = await client.get(f"/v1/sessions/{self.sid}/frame")
            assert got.status_code == 200
            return str(got.json()["frameRoot"])

    def audit_count(self) -> int:
        return len(self.door.audit.rows(None, 100_000))


@pytest.fixture
async def hostile(tmp_path: Path, rs: ModuleType) -> AsyncIterator[Hostile]:
    key = RSAKey.generate_key(2048, parameters={"kid": "k1", "use": "sig"})

    async def jwks(request: Request) -> JSONResponse:
        return JSONResponse({"keys": [key.as_dict(private=False)]})

    clock = Clock()
    creds = create_turn_credentials(now=clock, idle_ms=60_000)
    async with rs.serve(Starlette(routes=[Route("/jwks.json", jwks)])) as issuer_url:
        port = rs.free_port()
        base = f"http://127.0.0.1:{port}"
        config = DoorConfig(base_url=base, max_body_bytes=64 * 1024, request_timeout_s=1.5)
        verifier = JwtGrantVerifier(
            issuer=ISSUER, jwks_url=issuer_url + "/jwks.json", audiences=config.audiences
        )
        app, store, runtime, tokens, audit = rs.build_door_app(
            tmp_path,
            config=config,
            turn_credentials=creds,
            extra_verifiers=[verifier],
        )
        async with rs.serve(app, port) as served:
            assert served == base
            door = rs.LiveDoor(base, tmp_path, store, runtime, tokens, audit)
            alice = door.token("alice")
            async with door.client(alice) as client:
                opened = await client.post(
                    "/v1/sessions", json={"scenario": "acme-trend", "label": "victim"}
                )
                sid = opened.json()["sessionId"]
                for source in ("buy 10 ACME\nadvance", "advance 2"):
                    assert (
                        await client.post(f"/v1/sessions/{sid}/submit", json={"source": source})
                    ).status_code == 200
            yield Hostile(door, base, key, creds, clock, alice, sid, tmp_path / "kestrel.db")
        runtime.shutdown()
        store.close()


def _attacks(sid: str) -> list[tuple[str, str, Any]]:
    """State-changing requests an intruder would try: (method, path, json body)."""
    call = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {
            "name": "kestrel_session_submit",
            "arguments": {"sessionId": sid, "source": "sell 10 ACME\nadvance"},
        },
    }
    open_call = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {"name": "kestrel_session_open", "arguments": {"scenario": "acme-trend"}},
    }
    return [
        ("POST", "/v1/sessions", {"scenario": "acme-trend", "label": "intruder"}),
        ("POST", f"/v1/sessions/{sid}/submit", {"source": "sell 10 ACME\nadvance"}),
        ("POST", f"/v1/sessions/{sid}/close", None),
        ("POST", f"/v1/sessions/{sid}/grade", None),
        ("GET", f"/v1/sessions/{sid}/frame", None),
        ("GET", f"/v1/sessions/{sid}/blotter", None),
        ("POST", "/mcp", call),
        ("POST", "/mcp", open_call),
    ]


async def _send(client: httpx.AsyncClient, method: str, path: str, body: Any) -> httpx.Response:
    headers = MCP_HEADERS if path == "/mcp" else {}
    return await client.request(method, path, json=body, headers=headers)


async def test_another_principals_session_is_unknown(hostile: Hostile) -> None:
    before, head = hostile.snapshot(), await hostile.frame_root()
    bob = hostile.door.token("bob")
    oauth = hostile.jwt(sub="mallory")
    for token in (bob, oauth):
        async with hostile.door.client(token) as client:
            for method, path, body in _attacks(hostile.sid)[1:7]:
                got = await _send(client, method, path, body)
                if path == "/mcp":
                    result = got.json()["result"]
                    assert result["isError"] is True
                    refusal = result["structuredContent"]["refusal"]
                else:
                    assert got.status_code == 404, (path, got.text)
                    refusal = got.json()["refusal"]
                assert refusal["code"] == "UNKNOWN_SESSION", (path, refusal)
                assert "ACME" not in got.text  # nothing of alice's session leaks
    assert hostile.snapshot() == before
    assert await hostile.frame_root() == head


async def test_turn_credential_of_another_principal_cannot_reach_the_session(
    hostile: Hostile,
) -> None:
    ctx = RunContext(venue="harness", presence="present", principal="bob", scopes=ALL)
    tools = DoorTurnTools(ctx, _transport(hostile, "bob"), audit=hostile.door.audit)
    dispose = hostile.creds.publish("thread-bob", LiveTurn(ctx=ctx, tools=tools))
    token = hostile.creds.mint("thread-bob")
    assert token is not None
    before, head = hostile.snapshot(), await hostile.frame_root()
    async with hostile.door.client(token) as client:
        got = await client.post(
            f"/v1/sessions/{hostile.sid}/submit", json={"source": "sell 10 ACME\nadvance"}
        )
        assert got.status_code == 404
        assert got.json()["refusal"]["code"] == "UNKNOWN_SESSION"
    dispose()
    assert hostile.snapshot() == before
    assert await hostile.frame_root() == head


def _transport(hostile: Hostile, principal: str) -> Any:
    from kestrel_sdk import local_transport

    return local_transport(principal=principal, runtime=hostile.door.runtime)


async def _bad_tokens(hostile: Hostile) -> dict[str, str | None]:
    door = hostile.door
    revoked = door.token("carol")
    row = next(r for r in door.tokens.list() if r.principal == "carol")
    assert door.tokens.revoke(row.id) is not None
    forged_issued = revoked[: revoked.index("_", 8) + 1] + secrets.token_urlsafe(32)

    ctx = RunContext(venue="harness", presence="present", principal="alice", scopes=ALL)
    tools = DoorTurnTools(ctx, _transport(hostile, "alice"), audit=door.audit)
    dispose = hostile.creds.publish("thread-1", LiveTurn(ctx=ctx, tools=tools))
    expired_turn = hostile.creds.mint("thread-1")
    hostile.clock.ms += 61_000  # idle past the credential's limit
    revoked_turn = hostile.creds.mint("thread-1")
    assert revoked_turn is not None
    hostile.creds.revoke(revoked_turn)
    ended_turn = hostile.creds.mint("thread-1")
    dispose()  # the turn is over: its credentials resolve to nothing
    assert expired_turn is not None
    assert ended_turn is not None
    forged_turn = expired_turn[:-10] + "A" * 10

    now = int(time.time())
    public_pem = hostile.key.as_pem(private=False)
    claims = {"iss": ISSUER, "sub": "x", "aud": hostile.audience, "exp": now + 300}
    signing_input = (
        _b64(json.dumps({"alg": "HS256", "kid": "k1", "typ": "JWT"}).encode())
        + "."
        + _b64(json.dumps(claims).encode())
    )
    hs256 = (
        signing_input
        + "."
        + _b64(hmac.new(public_pem, signing_input.encode(), hashlib.sha256).digest())
    )
    alg_none = (
        _b64(json.dumps({"alg": "none", "typ": "JWT"}).encode())
        + "."
        + _b64(json.dumps(claims).encode())
        + "."
    )
    other_key = RSAKey.generate_key(2048, parameters={"kid": "k1"})
    forged_jwt = jwt.encode({"alg": "RS256", "kid": "k1"}, claims, other_key)
    good = hostile.jwt()
    return {
        "no credential": None,
        "empty bearer": "",
        "revoked issued token": revoked,
        "forged issued token": forged_issued,
        "expired turn credential": expired_turn,
        "revoked turn credential": revoked_turn,
        "ended turn credential": ended_turn,
        "forged turn credential": forged_turn,
        "expired jwt": hostile.jwt(exp=now - 600),
        "wrong-audience jwt": hostile.jwt(aud="https://elsewhere.example"),
        "wrong-issuer jwt": hostile.jwt(iss="https://evil.example"),
        "forged jwt": forged_jwt,
        "tampered jwt": good[:-6] + ("AAAAAA" if not good.endswith("AAAAAA") else "BBBBBB"),
        "alg none jwt": alg_none,
        "hs256 with the public key": hs256,
    }


async def test_bad_credentials_are_401_and_store_nothing(hostile: Hostile) -> None:
    bad = await _bad_tokens(hostile)
    before, head, audit = hostile.snapshot(), await hostile.frame_root(), hostile.audit_count()
    for name, token in bad.items():
        headers = {} if token is None else {"Authorization": f"Bearer {token}".strip()}
        async with httpx.AsyncClient(base_url=hostile.door.base, headers=headers) as client:
            for method, path, body in _attacks(hostile.sid):
                got = await _send(client, method, path, body)
                assert got.status_code == 401, (name, path, got.status_code, got.text)
                assert "resource_metadata=" in got.headers["www-authenticate"], name
                if token:
                    assert token not in got.text
                    assert 'error="invalid_token"' in got.headers["www-authenticate"], name
    assert hostile.snapshot() == before
    assert hostile.audit_count() == audit  # refused before any call: no audit row either
    assert await hostile.frame_root() == head
    dump = "\n".join(json.dumps(r.to_json()) for r in hostile.door.audit.rows(None, 100_000))
    for token in bad.values():
        if token:
            assert token not in dump


async def test_missing_scopes_are_403_and_store_nothing(hostile: Hostile) -> None:
    reader = hostile.door.token("alice", "kestrel:read")
    oauth_reader = hostile.jwt(sub="alice", scope="kestrel:read")
    before, head = hostile.snapshot(), await hostile.frame_root()
    for token in (reader, oauth_reader):
        async with hostile.door.client(token) as client:
            for method, path, body in _attacks(hostile.sid):
                if method == "GET":
                    continue  # reading is in scope
                got = await _send(client, method, path, body)
                assert got.status_code == 403, (path, got.status_code, got.text)
                assert 'error="insufficient_scope"' in got.headers["www-authenticate"]
            # The read scope still reads (the refusals were about scope, not identity):
            # alice's frame for her reader; the OAuth subject alice is another principal
            # (oauth:alice), to whom her session is unknown.
            assert (await client.get("/v1/catalog")).status_code == 200
            frame = await client.get(f"/v1/sessions/{hostile.sid}/frame")
            assert frame.status_code == (200 if token == reader else 404)
    assert hostile.snapshot() == before
    assert await hostile.frame_root() == head


async def test_dns_rebinding_host_and_origin_are_refused(hostile: Hostile) -> None:
    before, head, audit = hostile.snapshot(), await hostile.frame_root(), hostile.audit_count()
    port = hostile.door.base.rsplit(":", 1)[1]
    hostile_headers = [
        ({"Host": "evil.example"}, 421),
        ({"Host": f"evil.example:{port}"}, 421),
        ({"Host": f"127.0.0.1.evil.example:{port}"}, 421),
        ({"Origin": "http://evil.example"}, 403),
        ({"Origin": f"http://evil.example:{port}"}, 403),
        ({"Origin": "null"}, 403),
    ]
    async with hostile.door.client(hostile.alice) as client:
        for extra, status in hostile_headers:
            for method, path, body in _attacks(hostile.sid):
                headers = {**(MCP_HEADERS if path == "/mcp" else {}), **extra}
                got = await client.request(method, path, json=body, headers=headers)
                assert got.status_code == status, (extra, path, got.status_code)
    assert hostile.snapshot() == before
    assert hostile.audit_count() == audit
    assert await hostile.frame_root() == head


async def test_bodies_past_the_limit_are_413(hostile: Hostile) -> None:
    before, head, audit = hostile.snapshot(), await hostile.frame_root(), hostile.audit_count()
    big = "advance\n" * (10 * 1024)  # 80 KiB against a 64 KiB limit
    path = f"/v1/sessions/{hostile.sid}/submit"

    async def chunks() -> AsyncIterator[bytes]:
        data = json.dumps({"source": big}).encode()
        for i in range(0, len(data), 8192):
            yield data[i : i + 8192]

    async with hostile.door.client(hostile.alice) as client:
        sized = await client.post(path, json={"source": big})
        assert sized.status_code == 413
        assert sized.json()["refusal"]["code"] == "LIMIT_EXCEEDED"
        streamed = await client.post(
            path, content=chunks(), headers={"Content-Type": "application/json"}
        )
        assert streamed.status_code == 413  # no Content-Length: counted while reading
        call = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {
                "name": "kestrel_session_submit",
                "arguments": {"sessionId": hostile.sid, "source": big},
            },
        }
        assert (await client.post("/mcp", json=call, headers=MCP_HEADERS)).status_code == 413
    assert hostile.snapshot() == before
    assert hostile.audit_count() == audit
    assert await hostile.frame_root() == head


def _slow_request(base: str, token: str, path: str, *, trickle: bool) -> tuple[float, bytes]:
    """Send headers and part of a body, then stall (or trickle); time the door's answer."""
    host, port = base.removeprefix("http://").split(":")
    body = json.dumps({"source": "sell 10 ACME\nadvance"}).encode()
    head = (
        f"POST {path} HTTP/1.1\r\nHost: {host}:{port}\r\nAuthorization: Bearer {token}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
    ).encode()
    sock = socket.create_connection((host, int(port)))
    sock.settimeout(0.5)
    started = time.monotonic()
    answer = b""
    try:
        sock.sendall(head + body[:5])
        sent = 5
        while time.monotonic() - started < 15:
            if trickle and sent < len(body) - 1:
                sock.sendall(body[sent : sent + 1])  # one byte every half second
                sent += 1
            try:
                chunk = sock.recv(65536)
            except TimeoutError:
                continue
            except OSError:
                break
            if not chunk:
                break
            answer += chunk
            if b"\r\n\r\n" in answer:
                break
    finally:
        sock.close()
    return time.monotonic() - started, answer


async def test_slow_bodies_are_cut_off_by_the_timeout(hostile: Hostile) -> None:
    """The door's timeout is 1.5 s: it must answer (4xx) or hang up long before 15 s."""
    before, head = hostile.snapshot(), await hostile.frame_root()
    path = f"/v1/sessions/{hostile.sid}/submit"
    for trickle in (False, True):
        elapsed, answer = await anyio.to_thread.run_sync(
            partial(_slow_request, hostile.door.base, hostile.alice, path, trickle=trickle)
        )
        assert elapsed < 6, f"slow body (trickle={trickle}) held the door for {elapsed:.1f}s"
        if answer:
            status = int(answer.split(b" ", 2)[1])
            assert 400 <= status < 500, answer[:200]
    assert hostile.snapshot() == before
    assert await hostile.frame_root() == head
