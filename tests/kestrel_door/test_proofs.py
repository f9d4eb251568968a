"""Proofs and private artifacts through the door (issue 13).

Alice's pentad, head frame, blotter, record and grade are hers: bob reading any of them
by root, on ``/v1`` or ``/mcp`` (both eras), gets exactly what a root that was never
stored gets (status, code, message and detail, byte for byte once the root is swapped),
and so do his reads of her proof by grade root and his verification of her grade. The
proof tool, resource and routes give the same proof bytes as ``sdk.proof`` in-process.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from kestrel_protocol import (
    GradeResult,
    Proof,
    SessionRecord,
    SessionResponse,
    canonical_json,
    root_of,
)
from kestrel_sdk import create_sdk, local_transport

from .conftest import Kit, asgi_client

pytestmark = pytest.mark.anyio

NOWHERE = "sha256:" + "0" * 64
MODERN = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}


async def _alice_session(client: httpx.AsyncClient) -> dict[str, str]:
    """Alice trades, closes and grades a session over ``/v1``; the roots it made."""
    opened = await client.post("/v1/sessions", json={"scenario": "acme-trend", "label": "mine"})
    sid = opened.json()["sessionId"]
    submitted = await client.post(
        f"/v1/sessions/{sid}/submit", json={"source": "buy 10 ACME\nadvance 5\n"}
    )
    pentad = SessionResponse.parse(submitted.json()).pentad.root
    record = SessionRecord.parse((await client.post(f"/v1/sessions/{sid}/close")).json())
    grade = GradeResult.parse((await client.post(f"/v1/sessions/{sid}/grade")).json())
    return {
        "session": sid,
        "pentad": pentad,
        "frame": record.head,
        "blotter": record.blotter_root,
        "record": record.root,
        "grade": grade.root,
    }


def _swapped(response: httpx.Response, root: str) -> tuple[int, str, bytes]:
    """Status, media type and body with ``root`` written as the never-stored root."""
    body = response.content.replace(root.encode(), NOWHERE.encode())
    return response.status_code, response.headers["content-type"], body


async def _read(client: httpx.AsyncClient, uri: str, modern: bool) -> httpx.Response:
    params: dict[str, Any] = {"uri": uri}
    headers = {"Accept": "application/json, text/event-stream"}
    if modern:
        params["_meta"] = MODERN
        headers |= {
            "MCP-Protocol-Version": "2026-07-28",
            "Mcp-Method": "resources/read",
            "Mcp-Name": uri,
        }
    message = {"jsonrpc": "2.0", "id": 7, "method": "resources/read", "params": params}
    return await client.post("/mcp", json=message, headers=headers)


async def test_bob_cannot_read_alices_artifacts_and_cannot_tell_they_exist(kit: Kit) -> None:
    app = kit.runtime_app()
    async with (
        asgi_client(app, kit.token("alice")) as alice,
        asgi_client(app, kit.token("bob")) as bob,
    ):
        roots = await _alice_session(alice)
        grade = GradeResult.parse((await alice.get(f"/v1/artifacts/{roots['grade']}")).json())
        missing = {
            "v1": await bob.get(f"/v1/artifacts/{NOWHERE}"),
            "proof": await bob.get(f"/v1/proofs/{NOWHERE}"),
            **{
                f"mcp {era}": await _read(bob, f"kestrel://artifacts/{NOWHERE}", era == "modern")
                for era in ("legacy", "modern")
            },
        }
        assert missing["v1"].status_code == 404
        assert missing["v1"].json()["refusal"] == {
            "code": "UNKNOWN_ARTIFACT",
            "message": f"no artifact {NOWHERE}",
            "detail": {"root": NOWHERE, "status": "missing"},
        }
        for kind in ("pentad", "frame", "blotter", "record", "grade"):
            root = roots[kind]
            mine = await alice.get(f"/v1/artifacts/{root}")
            assert mine.status_code == 200, (kind, mine.text)
            assert root_of(mine.json()) == root, kind
            theirs = await bob.get(f"/v1/artifacts/{root}")
            assert _swapped(theirs, root) == _swapped(missing["v1"], NOWHERE), kind
            for era in ("legacy", "modern"):
                uri = f"kestrel://artifacts/{root}"
                assert "result" in (await _read(alice, uri, era == "modern")).json(), (kind, era)
                read = await _read(bob, uri, era == "modern")
                assert _swapped(read, root) == _swapped(missing[f"mcp {era}"], NOWHERE)
        # her proof by grade root, on /v1 and as a resource, is hers too
        theirs = await bob.get(f"/v1/proofs/{roots['grade']}")
        assert _swapped(theirs, roots["grade"]) == _swapped(missing["proof"], NOWHERE)
        assert theirs.json()["refusal"]["code"] == "UNKNOWN_ARTIFACT"
        for era in ("legacy", "modern"):
            nowhere = await _read(bob, f"kestrel://proofs/{NOWHERE}", era == "modern")
            read = await _read(bob, f"kestrel://proofs/{roots['grade']}", era == "modern")
            assert _swapped(read, roots["grade"]) == _swapped(nowhere, NOWHERE)
            assert "error" in read.json()
        # verifying her grade is, for bob, verifying a grade whose artifacts are not there
        report = (await bob.post("/v1/verify", json={"grade": grade.to_json()})).json()
        assert report["ok"] is False
        assert report["mismatch"] == {
            "field": "record",
            "expected": roots["record"],
            "found": "missing or corrupt in the artifact store",
        }
        assert (await alice.post("/v1/verify", json={"grade": grade.to_json()})).json()["ok"]
        # and her session is not his to prove
        refused = await bob.get(f"/v1/sessions/{roots['session']}/proof")
        assert refused.json()["refusal"]["code"] == "UNKNOWN_SESSION"


async def test_catalog_and_scenarios_stay_readable_by_every_reader(kit: Kit) -> None:
    app = kit.runtime_app()
    async with asgi_client(app, kit.token("bob", ("kestrel:read",))) as bob:
        assert (await bob.get("/v1/catalog")).status_code == 200
        assert (await bob.get("/v1/catalog/scenarios/acme-trend")).json()["id"] == "acme-trend"
        for era in ("legacy", "modern"):
            read = await _read(bob, "kestrel://catalog/scenarios/acme-trend", era == "modern")
            assert '"kestrel.scenario"' in read.json()["result"]["contents"][0]["text"]


async def test_proof_tool_resource_and_routes_give_the_local_proof_bytes(kit: Kit) -> None:
    app = kit.runtime_app()
    runtime = kit.runtimes[-1].runtime
    sdk = create_sdk(local_transport(principal="alice", runtime=runtime))
    async with asgi_client(app, kit.token("alice")) as alice:
        roots = await _alice_session(alice)
        sid = roots["session"]
        local = canonical_json(await sdk.proof(sid))
        embedded = canonical_json(await sdk.proof(sid, embed_tape=True))
        assert local != embedded
        route = await alice.get(f"/v1/sessions/{sid}/proof")
        assert route.status_code == 200, route.text
        assert canonical_json(Proof.parse(route.json())) == local
        route = await alice.get(f"/v1/sessions/{sid}/proof?embedTape=true")
        assert canonical_json(Proof.parse(route.json())) == embedded
        assert canonical_json(Proof.parse(route.json()).to_json()) == embedded
        assert (await alice.get(f"/v1/sessions/{sid}/proof?embedTape=false")).json() == (
            json.loads(local)
        )
        by_grade = await alice.get(f"/v1/proofs/{roots['grade']}")
        assert canonical_json(by_grade.json()) == local
        assert canonical_json(await sdk.proof_of_grade(roots["grade"])) == local
        for era in ("legacy", "modern"):
            read = await _read(alice, f"kestrel://proofs/{roots['grade']}", era == "modern")
            content = read.json()["result"]["contents"][0]
            assert content["mimeType"] == "application/json"
            assert canonical_json(json.loads(content["text"])) == local
        call = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "kestrel_proof", "arguments": {"sessionId": sid, "embedTape": True}},
        }
        called = await alice.post(
            "/mcp", json=call, headers={"Accept": "application/json, text/event-stream"}
        )
        result = called.json()["result"]
        assert result["isError"] is False
        assert canonical_json(result["structuredContent"]) == embedded
    await sdk.aclose()


@pytest.mark.parametrize(
    ("query", "named"),
    [
        ("embedTape=yes", "embedTape"),
        ("embed_tape=true", "embed_tape"),
        ("embedTape=1", "embedTape"),
    ],
)
async def test_a_proof_query_that_does_not_fit_is_400_naming_it(
    kit: Kit, query: str, named: str
) -> None:
    app = kit.runtime_app()
    async with asgi_client(app, kit.token("alice")) as alice:
        roots = await _alice_session(alice)
        resp = await alice.get(f"/v1/sessions/{roots['session']}/proof?{query}")
    assert resp.status_code == 400
    refusal = resp.json()["refusal"]
    assert refusal["code"] == "INVALID_ARGUMENT"
    assert named in refusal["message"]


async def test_proof_scopes_and_openapi(kit: Kit) -> None:
    app = kit.runtime_app()
    async with (
        asgi_client(app, kit.token("alice")) as alice,
        asgi_client(app, kit.token("alice", ("kestrel:read",))) as reader,
    ):
        roots = await _alice_session(alice)
        # kestrel_proof may grade (and close) a session, as kestrel_grade does: grade scope
        refused = await reader.get(f"/v1/sessions/{roots['session']}/proof")
        assert refused.status_code == 403
        assert refused.json()["refusal"]["detail"]["requiredScope"] == "kestrel:grade"
        # the proof of a grade only reads: read scope
        assert (await reader.get(f"/v1/proofs/{roots['grade']}")).status_code == 200
        doc = (await alice.get("/v1/openapi.json")).json()
    operation = doc["paths"]["/v1/sessions/{id}/proof"]["get"]
    assert operation["operationId"] == "kestrel_proof"
    query = [p for p in operation["parameters"] if p["in"] == "query"]
    assert query == [
        {
            "name": "embedTape",
            "in": "query",
            "required": False,
            "description": query[0]["description"],
            "schema": {"type": "boolean", "default": False},
        }
    ]
    assert "tape" in query[0]["description"]
    by_grade = doc["paths"]["/v1/proofs/{root}"]["get"]
    assert by_grade["operationId"] == "kestrel_proof_of_grade"
    assert "404" in by_grade["responses"]
