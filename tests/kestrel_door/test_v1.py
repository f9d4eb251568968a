from __future__ import annotations

from typing import Any

import pytest
from kestrel_protocol import Catalog, GradeResult, SessionRecord, SessionResponse

from .conftest import Kit, asgi_client

pytestmark = pytest.mark.anyio

SOURCE = "buy 10 ACME\nadvance 5\n"


async def _open(client: Any, scenario: str = "acme-trend") -> str:
    resp = await client.post("/v1/sessions", json={"scenario": scenario, "label": "t"})
    assert resp.status_code == 200, resp.text
    body = resp.json()
    assert body["gated"] is False
    return str(body["sessionId"])


async def test_whole_session_over_v1(kit: Kit) -> None:
    async with asgi_client(kit.app(), kit.token()) as client:
        catalog = Catalog.parse((await client.get("/v1/catalog")).json())
        assert "acme-trend" in [s.id for s in catalog.scenarios]
        sid = await _open(client)
        resp = await client.post(f"/v1/sessions/{sid}/submit", json={"source": SOURCE})
        assert resp.status_code == 200, resp.text
        submitted = SessionResponse.parse(resp.json())
        assert submitted.pentad.seq == 1
        text = await client.post(
            f"/v1/sessions/{sid}/submit",
            content="advance 2\n",
            headers={"content-type": "text/x-kestrel"},
        )
        assert text.status_code == 200
        frame = (await client.get(f"/v1/sessions/{sid}/frame")).json()
        assert frame["frame"]["seq"] == 2
        blotter = (await client.get(f"/v1/sessions/{sid}/blotter")).json()
        assert blotter["kind"] == "kestrel.blotter"
        record = SessionRecord.parse((await client.post(f"/v1/sessions/{sid}/close")).json())
        graded = await client.post(f"/v1/sessions/{sid}/grade")
        assert graded.status_code in (200, 202)
        if graded.status_code == 200:
            grade = GradeResult.parse(graded.json())
            assert grade.record == record.root
            report = (await client.post("/v1/verify", json={"grade": grade.to_json()})).json()
            assert report["ok"] is True
        art = await client.get(f"/v1/artifacts/{record.root}")
        assert art.status_code == 200
        assert art.json()["root"] == record.root
        scen = await client.get("/v1/catalog/scenarios/acme-trend")
        assert scen.json()["id"] == "acme-trend"
        tape = await client.get("/v1/catalog/scenarios/acme-trend/tape")
        assert tape.headers["content-type"].startswith("text/csv")
        assert tape.text.count("\n") > 10


async def test_refusals_are_4xx_with_code(kit: Kit) -> None:
    async with asgi_client(kit.app(), kit.token()) as client:
        resp = await client.post("/v1/sessions", json={"scenario": "no-such"})
        assert resp.status_code == 404
        assert resp.json()["refusal"]["code"] == "UNKNOWN_SCENARIO"
        resp = await client.get("/v1/sessions/ks_nope/frame")
        assert resp.status_code == 404
        assert resp.json()["refusal"]["code"] == "UNKNOWN_SESSION"
        sid = await _open(client)
        resp = await client.post(f"/v1/sessions/{sid}/submit", json={"source": "buy banana\n"})
        assert resp.status_code == 422
        assert resp.json()["refusal"]["code"] == "INVALID_SOURCE"
        await client.post(f"/v1/sessions/{sid}/close")
        resp = await client.post(f"/v1/sessions/{sid}/submit", json={"source": SOURCE})
        assert resp.status_code == 409
        assert resp.json()["refusal"]["code"] == "SESSION_CLOSED"
        resp = await client.get("/v1/artifacts/sha256:" + "0" * 64)
        assert resp.json()["refusal"]["code"] == "UNKNOWN_ARTIFACT"
        resp = await client.post("/v1/operations/resume", json={"token": "nope"})
        assert resp.json()["refusal"]["code"] == "UNKNOWN_OPERATION"


async def test_bad_request_bodies_are_400_not_5xx(kit: Kit) -> None:
    async with asgi_client(kit.app(), kit.token()) as client:
        for body in (b"not json", b"[1,2]", b'{"scenario": 5}', b'{"source": null}'):
            for path in ("/v1/sessions", "/v1/validate", "/v1/operations/resume", "/v1/verify"):
                resp = await client.post(
                    path, content=body, headers={"content-type": "application/json"}
                )
                assert 400 <= resp.status_code < 500, (path, body, resp.text)
                assert "refusal" in resp.json()


async def test_a_body_that_is_no_json_in_utf8_is_refused_as_mcp_refuses_it(kit: Kit) -> None:
    # what the MCP faces refuse as a parse error (jsonrpc.decode_frame) is no JSON here
    # either: a byte order mark, another encoding, a lone surrogate's bytes, NaN
    ok = '{"source": "buy 1 ACME", "scenario": "acme-trend"}'
    bodies = (
        b"\xef\xbb\xbf" + ok.encode(),
        ok.encode("utf-16"),
        b'{"source": "buy 1 ACME \xed\xa0\x80"}',
        b'{"source": "buy 1 ACME", "x": NaN}',
    )
    async with asgi_client(kit.app(), kit.token()) as client:
        assert (await client.post("/v1/validate", content=ok)).status_code == 200
        for body in bodies:
            resp = await client.post(
                "/v1/validate", content=body, headers={"content-type": "application/json"}
            )
            assert resp.status_code == 400, (body, resp.text)
            assert resp.json()["refusal"]["message"] == "the request body is not JSON"


async def test_another_principal_never_sees_a_session(kit: Kit) -> None:
    app = kit.app()
    async with (
        asgi_client(app, kit.token("alice")) as alice,
        asgi_client(app, kit.token("bob")) as bob,
    ):
        sid = await _open(alice)
        for method, path in (
            ("GET", f"/v1/sessions/{sid}/frame"),
            ("GET", f"/v1/sessions/{sid}/blotter"),
            ("POST", f"/v1/sessions/{sid}/close"),
            ("POST", f"/v1/sessions/{sid}/grade"),
        ):
            resp = await bob.request(method, path)
            assert resp.status_code == 404, (path, resp.text)
            assert resp.json()["refusal"]["code"] == "UNKNOWN_SESSION"
        resp = await bob.post(f"/v1/sessions/{sid}/submit", json={"source": SOURCE})
        assert resp.json()["refusal"]["code"] == "UNKNOWN_SESSION"
        # and alice still can
        assert (await alice.get(f"/v1/sessions/{sid}/frame")).status_code == 200


async def test_metadata_is_served_only_for_a_resource_the_door_accepts_tokens_for(
    kit: Kit,
) -> None:
    """RFC 9728: a client that fetches ``…/oauth-protected-resource/v1`` (the path it
    means to call) asks its authorization server for tokens naming the ``resource`` it
    finds there. The door accepts the audiences base, base/ and base/mcp only, so
    metadata naming ``…/v1`` would lead a client to tokens refused 401 on every call;
    it is 404, the door's refusal naming the path, and the client falls back to the
    root document."""
    async with asgi_client(kit.app()) as anon:
        for suffix in ("mcp", "mcp/"):
            found = await anon.get(f"/.well-known/oauth-protected-resource/{suffix}")
            assert found.status_code == 200
            assert found.json()["resource"] in kit.config.audiences
        for suffix in ("v1", "v1/catalog", "anything/at/all"):
            missing = await anon.get(f"/.well-known/oauth-protected-resource/{suffix}")
            assert missing.status_code == 404, suffix
            refusal = missing.json()["refusal"]
            assert refusal["code"] == "INVALID_ARGUMENT"
            assert refusal["detail"] == {
                "where": "path",
                "path": f"/.well-known/oauth-protected-resource/{suffix}",
            }


async def test_without_credential_only_metadata_is_served(kit: Kit) -> None:
    app = kit.app()
    async with asgi_client(app) as anon:
        meta = await anon.get("/.well-known/oauth-protected-resource")
        assert meta.status_code == 200
        assert meta.json()["resource"] == "http://127.0.0.1:8787"
        assert "kestrel:trade" in meta.json()["scopes_supported"]
        suffixed = await anon.get("/.well-known/oauth-protected-resource/mcp")
        assert suffixed.json()["resource"] == "http://127.0.0.1:8787/mcp"
        for method, path in (
            ("GET", "/v1/catalog"),
            ("GET", "/v1/openapi.json"),
            ("POST", "/v1/sessions"),
            ("GET", "/v1/artifacts/sha256:" + "0" * 64),
            ("POST", "/mcp"),
            ("GET", "/mcp"),
        ):
            resp = await anon.request(method, path, json={"scenario": "acme-trend"})
            assert resp.status_code == 401, path
            challenge = resp.headers["www-authenticate"]
            assert challenge.startswith("Bearer ")
            assert (
                'resource_metadata="http://127.0.0.1:8787/.well-known/oauth-protected-resource"'
                in challenge
            )
    for bad in ("Bearer nope", "Basic YWxhZGRpbjpvcGVuc2VzYW1l", "Bearer", "kestrel_tok_x"):
        async with asgi_client(app, Authorization=bad) as client:
            resp = await client.get("/v1/catalog")
            assert resp.status_code == 401, bad


async def test_revoked_token_is_401(kit: Kit) -> None:
    row, token = kit.tokens.issue("alice", ["kestrel:read"])
    async with asgi_client(kit.app(), token) as client:
        assert (await client.get("/v1/catalog")).status_code == 200
        assert kit.tokens.revoke(row.id) is not None
        assert (await client.get("/v1/catalog")).status_code == 401


async def test_insufficient_scope_is_403_with_challenge(kit: Kit) -> None:
    async with asgi_client(kit.app(), kit.token("alice", ("kestrel:read",))) as client:
        assert (await client.get("/v1/catalog")).status_code == 200
        resp = await client.post("/v1/sessions", json={"scenario": "acme-trend"})
        assert resp.status_code == 403
        assert resp.json()["refusal"]["code"] == "FORBIDDEN"
        challenge = resp.headers["www-authenticate"]
        assert 'error="insufficient_scope"' in challenge
        assert 'scope="kestrel:trade"' in challenge


async def test_openapi_document(kit: Kit) -> None:
    async with asgi_client(kit.app(), kit.token()) as client:
        doc = (await client.get("/v1/openapi.json")).json()
    assert doc["openapi"].startswith("3.1")
    for path in ("/v1/catalog", "/v1/sessions", "/v1/sessions/{id}/submit", "/v1/openapi.json"):
        assert path in doc["paths"]
    assert "402" in doc["paths"]["/v1/sessions"]["post"]["responses"]


async def test_every_route_refuses_unknown_query_and_body_members(kit: Kit) -> None:
    async with asgi_client(kit.app(), kit.token()) as client:
        sid = await _open(client)
        for method, path, body in [
            ("GET", "/v1/catalog?zzz=1", None),
            ("GET", "/v1/catalog/scenarios/acme-trend?zzz=1", None),
            ("GET", f"/v1/sessions/{sid}/frame?zzz=1", None),
            ("GET", f"/v1/sessions/{sid}/blotter?zzz=1", None),
            ("POST", f"/v1/sessions/{sid}/submit?zzz=1", {"source": "advance 1"}),
            ("POST", f"/v1/sessions/{sid}/close", {"zzz": 1}),
            ("POST", f"/v1/sessions/{sid}/grade", {"zzz": 1}),
            ("POST", "/v1/sessions", {"scenario": "acme-trend", "zzz": 1}),
        ]:
            resp = await client.request(method, path, json=body)
            assert resp.status_code == 400, (path, resp.text)
            refusal = resp.json()["refusal"]
            assert refusal["code"] == "INVALID_ARGUMENT", (path, refusal)
            assert "zzz" in refusal["message"], (path, refusal)
        # nothing was done: the session is still open at seq 0
        frame = (await client.get(f"/v1/sessions/{sid}/frame")).json()
        assert (frame["frame"]["seq"], frame["frame"]["status"]) == (0, "open")
        resp = await client.post(f"/v1/sessions/{sid}/close", content=b"[1]")
        assert resp.status_code == 400


async def test_a_401_says_whether_a_bearer_was_sent(kit: Kit) -> None:
    """No bearer and a bearer the door does not accept are different things to fix: the
    refusal says which (it used to say "a valid bearer credential is required" to both)."""
    app = kit.app()
    async with asgi_client(app) as anon:
        for path in ("/v1/catalog", "/mcp"):
            resp = await anon.request("POST" if path == "/mcp" else "GET", path)
            assert resp.status_code == 401, path
            body = resp.json()  # on /mcp the refusal is a JSON-RPC error's data
            message = (body["error"]["data"] if path == "/mcp" else body)["refusal"]["message"]
            assert "none was sent" in message, message
            assert "KESTREL_API_TOKEN" in message
    row, token = kit.tokens.issue("alice", ["kestrel:read"])
    assert kit.tokens.revoke(row.id) is not None
    for bad in (f"Bearer {token}", "Bearer kestrel_tok_not-issued-here"):
        async with asgi_client(app, Authorization=bad) as client:
            resp = await client.get("/v1/catalog")
            assert resp.status_code == 401, bad
            message = resp.json()["refusal"]["message"]
            assert "not valid here: unknown, revoked or expired" in message, message
            assert "none was sent" not in message
            assert bad.split()[-1] not in resp.text  # the token is never echoed


async def test_a_401_says_when_the_authorization_header_is_not_a_bearer(kit: Kit) -> None:
    """A token sent without its scheme (``curl -H "Authorization: $TOKEN"``) or under
    another one: the refusal says the header is not ``Bearer TOKEN``, on both faces, not
    that nothing was sent nor that a valid token is unknown; the token is never echoed."""
    app = kit.app()
    _, token = kit.tokens.issue("alice", ["kestrel:read"])
    for header in (token, f"Token {token}", "Basic YWxpY2U6c2VjcmV0", "Bearer "):
        async with asgi_client(app, Authorization=header) as client:
            for path in ("/v1/catalog", "/mcp"):
                resp = await client.request("POST" if path == "/mcp" else "GET", path)
                assert resp.status_code == 401, (header, path)
                body = resp.json()
                refusal = (body["error"]["data"] if path == "/mcp" else body)["refusal"]
                assert "holds no bearer credential" in refusal["message"], (header, refusal)
                assert "Authorization: Bearer TOKEN" in refusal["message"]
                assert token not in resp.text
