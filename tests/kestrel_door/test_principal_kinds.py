"""An OAuth subject and an issued principal of the same name are two principals.

A real ``kestrel-door serve`` on loopback admits issued tokens and, with ``--oauth-issuer``
and ``--oauth-jwks``, JWT access tokens of an issuer whose JWKS this test serves on
loopback. The operator issued a token for ``ev``; the issuer's subject ``ev`` is someone
else. Its token must not see, advance or read what ``ev``'s token made, on ``/v1`` or
``/mcp``; the trials each mints are each its own; their proofs name two pseudonyms (the
board credits a row to the statement's); and ``token issue`` refuses a name in the OAuth
subjects' namespace (``oauth:``) or a trial's (``/trial-``), so the operator cannot make one
that collides either.
"""

from __future__ import annotations

import base64
import json
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from click.testing import CliRunner
from joserfc import jwt
from joserfc.jwk import RSAKey
from kestrel_door.cli import door_group
from kestrel_door.expiry import OAUTH_TRIAL_LIFETIME, lifetime_seconds, time_of
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from tests.doors import MCP_HEADERS, Door, serve_door
from tests.loopback import serve

pytestmark = pytest.mark.anyio

ISSUER = "https://issuer.principals.test"
SCOPES = "kestrel:read kestrel:trade kestrel:grade kestrel:trials"


@dataclass
class Both:
    door: Door
    key: RSAKey

    def jwt(self, sub: str) -> str:
        now = int(time.time())
        claims = {
            "iss": ISSUER,
            "sub": sub,
            "aud": self.door.url,
            "exp": now + 600,
            "iat": now,
            "scope": SCOPES,
        }
        return jwt.encode({"alg": "RS256", "kid": "k1"}, claims, self.key)

    def client(self, token: str) -> httpx.AsyncClient:
        headers = {"Authorization": f"Bearer {token}"}
        return httpx.AsyncClient(base_url=self.door.url, headers=headers, timeout=60)


@pytest.fixture
async def both(tmp_path: Any) -> AsyncIterator[Both]:
    """The door with both admissions, the issued principal ``ev`` its operator's."""
    key = RSAKey.generate_key(2048, parameters={"kid": "k1", "use": "sig"})

    async def jwks(request: Request) -> JSONResponse:
        return JSONResponse({"keys": [key.as_dict(private=False)]})

    async with serve(Starlette(routes=[Route("/jwks.json", jwks)])) as issuer_url:
        oauth = ("--oauth-issuer", ISSUER, "--oauth-jwks", issuer_url + "/jwks.json")
        with serve_door(tmp_path / "door", *oauth, principal="ev") as door:
            yield Both(door, key)


async def _open(client: httpx.AsyncClient) -> tuple[str, str]:
    """A session opened and stepped: its id and its frame's root."""
    opened = await client.post("/v1/sessions", json={"scenario": "acme-trend"})
    assert opened.status_code == 200, opened.text
    sid = opened.json()["sessionId"]
    stepped = await client.post(f"/v1/sessions/{sid}/submit", json={"source": "advance 2"})
    assert stepped.status_code == 200, stepped.text
    frame = await client.get(f"/v1/sessions/{sid}/frame")
    return sid, str(frame.json()["frameRoot"])


async def _mcp_frame(client: httpx.AsyncClient, sid: str) -> dict[str, Any]:
    call = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "kestrel_session_frame", "arguments": {"sessionId": sid}},
    }
    got = await client.post("/mcp", json=call, headers=MCP_HEADERS)
    assert got.status_code == 200, got.text
    return dict(got.json()["result"])


def _statement(proof: dict[str, Any]) -> dict[str, Any]:
    statement: dict[str, Any] = json.loads(base64.b64decode(proof["attestation"]["payload"]))
    return statement


async def test_an_oauth_subject_is_not_the_issued_principal_of_its_name(both: Both) -> None:
    async with both.client(both.door.token) as issued, both.client(both.jwt("ev")) as oauth:
        sid, frame_root = await _open(issued)
        listed = (await oauth.get("/v1/sessions")).json()
        assert sid not in str(listed)
        frame = await oauth.get(f"/v1/sessions/{sid}/frame")
        assert frame.status_code == 404
        assert frame.json()["refusal"]["code"] == "UNKNOWN_SESSION"
        moved = await oauth.post(f"/v1/sessions/{sid}/submit", json={"source": "advance 1"})
        assert moved.json()["refusal"]["code"] == "UNKNOWN_SESSION"
        artifact = await oauth.get(f"/v1/artifacts/{frame_root}")
        assert artifact.status_code == 404
        assert artifact.json()["refusal"]["code"] == "UNKNOWN_ARTIFACT"
        on_mcp = await _mcp_frame(oauth, sid)
        assert on_mcp["isError"] is True
        assert on_mcp["structuredContent"]["refusal"]["code"] == "UNKNOWN_SESSION"
        still = (await issued.get(f"/v1/sessions/{sid}/frame")).json()
        assert still["frameRoot"] == frame_root  # the intruder moved nothing

        # each proof's statement names its own principal: the board's rows are two
        own_sid, _ = await _open(oauth)
        proofs = [
            (await c.get(f"/v1/sessions/{s}/proof")).json()
            for c, s in ((issued, sid), (oauth, own_sid))
        ]
        named = {_statement(p)["predicate"]["principal"] for p in proofs}
        assert len(named) == 2, named


async def test_the_trials_each_kind_mints_are_its_own(both: Both) -> None:
    async with both.client(both.door.token) as issued, both.client(both.jwt("ev")) as oauth:
        mine = await issued.post("/v1/trials", json={"trial": "run-1"})
        theirs = await oauth.post("/v1/trials", json={"trial": "run-1"})
        assert mine.status_code == theirs.status_code == 201, (mine.text, theirs.text)
        assert mine.json()["principal"] == "ev/trial-run-1"
        assert theirs.json()["principal"] == "oauth:ev/trial-run-1"
        async with both.client(mine.json()["token"]) as trial:
            sid, _ = await _open(trial)
        async with both.client(theirs.json()["token"]) as other:
            frame = await other.get(f"/v1/sessions/{sid}/frame")
            assert frame.json()["refusal"]["code"] == "UNKNOWN_SESSION"
        # neither revokes the other's trial
        for client, token_id in ((issued, theirs.json()), (oauth, mine.json())):
            gone = await client.delete(f"/v1/trials/{token_id['tokenId']}")
            assert gone.status_code == 404, gone.text


async def test_a_trial_an_oauth_grant_mints_ends_within_the_stated_bound(both: Both) -> None:
    """The door never sees an OAuth grant's refresh token nor its revocation, and a trial
    token has no issued parent to end with: so it ends within :data:`OAUTH_TRIAL_LIFETIME`
    (not at the access token's ``exp``, minutes away), sooner when asked, and says so."""
    bound = lifetime_seconds(OAUTH_TRIAL_LIFETIME)
    assert bound is not None
    async with both.client(both.jwt("ev")) as oauth:
        plain = await oauth.post("/v1/trials", json={"trial": "run-1"})
        longer = await oauth.post("/v1/trials", json={"trial": "run-2", "expiresIn": 9 * bound})
        shorter = await oauth.post("/v1/trials", json={"trial": "run-3", "expiresIn": 600})
    now = time.time()
    for minted in (plain, longer):
        assert minted.status_code == 201, minted.text
        until = minted.json()["expiresAt"]
        assert until is not None  # before: null, a trial that outlived any revocation
        assert now + bound - 120 < time_of(until) <= now + bound
    assert now < time_of(shorter.json()["expiresAt"]) <= now + 600
    listed = CliRunner().invoke(door_group, ["--home", str(both.door.home), "token", "list"])
    line = next(ln for ln in listed.output.splitlines() if "oauth:ev/trial-run-1" in ln)
    assert f"expires {plain.json()['expiresAt']}" in line
    async with both.client(plain.json()["token"]) as trial:  # usable until then
        assert (await trial.get("/v1/catalog")).status_code == 200


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("oauth:ev", "OAuth"),
        ("ev/trial-run-1", "trial"),
    ],
)
def test_token_issue_refuses_a_name_another_kind_owns(tmp_path: Any, name: str, why: str) -> None:
    args = ["--home", str(tmp_path), "token", "issue", "--principal", name]
    done = CliRunner().invoke(door_group, [*args, "--scope", "kestrel:read"])
    assert done.exit_code == 2, done.output
    assert name in done.output
    assert why in done.output
    listed = CliRunner().invoke(door_group, ["--home", str(tmp_path), "token", "list"])
    assert name not in listed.output
