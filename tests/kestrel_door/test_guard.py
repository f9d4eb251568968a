from __future__ import annotations

from collections.abc import AsyncIterator, MutableMapping
from typing import Any

import pytest
from kestrel_door import DoorConfig
from kestrel_door.guard import matches

from .conftest import BASE, Kit, asgi_client

pytestmark = pytest.mark.anyio


def test_matches_port_wildcards() -> None:
    assert matches("127.0.0.1:8787", ["127.0.0.1:*"])
    assert matches("localhost", ["localhost:*"])
    assert not matches("127.0.0.1.evil.com:80", ["127.0.0.1:*"])
    assert not matches("evil.com", ["127.0.0.1:*", "localhost:*"])
    assert not matches("127.0.0.1:80x", ["127.0.0.1:*"])


async def test_foreign_host_is_refused(kit: Kit) -> None:
    async with asgi_client(kit.app(), kit.token(), Host="attacker.example") as client:
        resp = await client.get("/v1/catalog")
    assert resp.status_code == 421
    meta_host = "rebound.example:8787"
    async with asgi_client(kit.app(), Host=meta_host) as client:
        assert (await client.get("/.well-known/oauth-protected-resource")).status_code == 421


async def test_foreign_origin_is_refused_and_loopback_origin_allowed(kit: Kit) -> None:
    app = kit.app()
    async with asgi_client(app, kit.token(), Origin="https://evil.example") as client:
        resp = await client.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
    assert resp.status_code == 403
    async with asgi_client(app, kit.token(), Origin="http://localhost:3000") as client:
        resp = await client.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
    assert resp.status_code == 200


async def test_body_limit_is_413_by_header_and_by_stream(kit: Kit) -> None:
    config = DoorConfig(base_url=BASE, max_body_bytes=1024)
    app = kit.app(config=config)
    big = b'{"source": "' + b"x" * 4096 + b'"}'
    async with asgi_client(app, kit.token()) as client:
        resp = await client.post(
            "/v1/validate", content=big, headers={"content-type": "application/json"}
        )
        assert resp.status_code == 413
        assert resp.json()["refusal"]["code"] == "LIMIT_EXCEEDED"

        async def chunks() -> AsyncIterator[bytes]:
            for _ in range(8):
                yield b"x" * 512

        resp = await client.post(
            "/v1/validate", content=chunks(), headers={"content-type": "application/json"}
        )
        assert resp.status_code == 413
        small = await client.post("/v1/validate", json={"source": "buy 1 ACME\n"})
        assert small.status_code == 200


async def test_trickled_body_is_cut_off_with_408() -> None:
    status, _ = await _guarded("/v1/validate", [(b"host", b"127.0.0.1:1")])
    assert status == 408  # and the app never reached (_guarded's app fails if it is)


async def _guarded(path: str, headers: list[tuple[bytes, bytes]]) -> tuple[int, Any]:
    """The status and JSON body a guard (0.2 s for a body) sends a request to ``path``
    whose body trickles in a byte at a time."""
    import json

    import anyio
    from kestrel_door.guard import GuardMiddleware

    async def app(scope: Any, receive: Any, send: Any) -> None:
        raise AssertionError("the guard let the request through")

    guard = GuardMiddleware(
        app,
        allowed_hosts=["127.0.0.1:*"],
        allowed_origins=[],
        max_body_bytes=1024,
        body_timeout_s=0.2,
    )
    sent: list[MutableMapping[str, Any]] = []

    async def receive() -> dict[str, Any]:
        await anyio.sleep(0.05)
        return {"type": "http.request", "body": b"x", "more_body": True}

    async def send(message: MutableMapping[str, Any]) -> None:
        sent.append(message)

    scope = {"type": "http", "method": "POST", "path": path, "headers": headers}
    with anyio.fail_after(5):
        await guard(scope, receive, send)
    return sent[0]["status"], json.loads(sent[1]["body"])


@pytest.mark.parametrize(
    ("length", "status", "code", "words"),
    [
        (None, 408, "LIMIT_EXCEEDED", "the request body took too long to arrive"),
        (b"12x", 400, "INVALID_ARGUMENT", "Content-Length is not a number"),
    ],
    ids=["slow-body", "bad-length"],
)
async def test_a_guard_refusal_on_mcp_is_a_json_rpc_error(
    length: bytes | None, status: int, code: str, words: str
) -> None:
    headers = [(b"host", b"127.0.0.1:1")]
    if length is not None:
        headers.append((b"content-length", length))
    on_v1 = await _guarded("/v1/validate", headers)
    assert on_v1 == (status, {"refusal": {"code": code, "message": words, "detail": {}}})
    mcp_status, answer = await _guarded("/mcp", headers)
    assert mcp_status == status
    error = {"code": -32600, "message": words, "data": on_v1[1]}
    assert answer == {"jsonrpc": "2.0", "id": None, "error": error}
