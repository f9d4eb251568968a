from __future__ import annotations

from pathlib import Path

import pytest
from kestrel_door import ISSUED_TOKEN_PREFIX, DoorStore, IssuedTokens

from .conftest import Kit, asgi_client

pytestmark = pytest.mark.anyio


@pytest.fixture
def tokens(tmp_path: Path) -> IssuedTokens:
    return IssuedTokens(DoorStore(tmp_path / "door.db"))


async def test_issue_verify_revoke(tokens: IssuedTokens) -> None:
    row, token = tokens.issue("alice", ["kestrel:read", "kestrel:read", "kestrel:grade"], "ci")
    assert token.startswith(ISSUED_TOKEN_PREFIX)
    assert row.scopes == ("kestrel:grade", "kestrel:read")
    grant = await tokens.verify(token)
    assert grant is not None
    assert (grant.principal, grant.kind) == ("alice", "issued")
    assert grant.scopes == frozenset({"kestrel:read", "kestrel:grade"})
    assert tokens.revoke(row.id) == 0  # live, and it minted no trial
    assert await tokens.verify(token) is None
    assert tokens.revoke(row.id) is None  # no live token of that id
    assert tokens.list()[0].revoked_at is not None


async def test_each_token_is_distinct_and_only_its_hash_is_stored(
    tokens: IssuedTokens, tmp_path: Path
) -> None:
    issued = [tokens.issue("p", ["kestrel:read"])[1] for _ in range(20)]
    assert len(set(issued)) == 20
    raw = b"".join(p.read_bytes() for p in tmp_path.iterdir() if p.name.startswith("door.db"))
    for token in issued:
        assert token.encode() not in raw
        assert token[len(ISSUED_TOKEN_PREFIX) :].encode() not in raw


@pytest.mark.parametrize(
    ("principal", "scopes"), [("", ["kestrel:read"]), ("p", []), ("p", ["admin"])]
)
def test_issue_refuses_bad_input(tokens: IssuedTokens, principal: str, scopes: list[str]) -> None:
    with pytest.raises(ValueError, match=r"principal|scope"):
        tokens.issue(principal, scopes)


@pytest.mark.parametrize(
    "garbage",
    ["", "x", ISSUED_TOKEN_PREFIX, ISSUED_TOKEN_PREFIX + "A" * 43, "é" * 55, "a" * 100_000],
)
async def test_verify_garbage_is_none(tokens: IssuedTokens, garbage: str) -> None:
    tokens.issue("p", ["kestrel:read"])
    assert await tokens.verify(garbage) is None


async def test_a_lookup_the_store_cannot_answer_is_an_outage_not_a_bad_token(
    tmp_path: Path,
) -> None:
    from kestrel_protocol import KestrelError

    store = DoorStore(tmp_path / "door.db")
    _, token = IssuedTokens(store).issue("alice", ["kestrel:read"])
    store.close()  # the store's connection is gone: nothing can be judged
    with pytest.raises(KestrelError) as raised:
        await IssuedTokens(store).verify(token)
    assert (raised.value.code, raised.value.message) == ("BACKEND_UNAVAILABLE", "store unavailable")
    assert await IssuedTokens(store).verify("kestrel_tok_short") is None  # shape: no lookup
    reopened = DoorStore(tmp_path / "door.db")
    assert await IssuedTokens(reopened).verify(token) is not None  # judged once it answers
    reopened.close()


async def test_a_store_outage_before_any_call_is_a_json_rpc_error_on_mcp(kit: Kit) -> None:
    """The 503 of a bearer the store cannot judge is, on ``/mcp``, a JSON-RPC error whose
    data is ``/v1``'s refusal, so an MCP client shows the outage (and still retries)."""
    app, token = kit.app(), kit.token()
    kit.store.close()  # the store's connection is gone: the bearer cannot be judged
    async with asgi_client(app, token) as client:
        over_v1 = await client.get("/v1/catalog")
        call = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
        over_mcp = await client.post("/mcp", json=call)
    assert over_v1.status_code == over_mcp.status_code == 503
    assert over_mcp.headers["retry-after"] == over_v1.headers["retry-after"]
    refusal = over_v1.json()["refusal"]
    assert refusal["code"] == "BACKEND_UNAVAILABLE"
    error = {"code": -32600, "message": refusal["message"], "data": {"refusal": refusal}}
    assert over_mcp.json() == {"jsonrpc": "2.0", "id": None, "error": error}
