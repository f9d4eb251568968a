"""Approvals that cannot be walked around (issue 45).

With an approval required of ``kestrel_grade``, ``kestrel_proof`` graded and closed the
session without one: it has the same effect. Each tool declares its effects once, in the
registry; an approval required of a tool is required of every tool that has all of its
effects. The pairs (guarded tool, tool that would walk around it) are derived here from
the registry, never listed by hand, and each walk-around is tried on every face with
approvals: ``/v1`` (its route, and the SDK's remote transport over it) and ``/mcp`` in
both eras. Each is refused with the approval refusal of the guarded tool itself, nothing
happens to the session, and the operator's grant of that tool lets it through.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner
from kestrel_door import RequireApproval
from kestrel_door.cli import door_group
from kestrel_door.door_tools import APPROVAL_MESSAGE
from kestrel_protocol import KestrelError
from kestrel_protocol.surface import SURFACE, Tool
from kestrel_sdk import remote_transport

from tests.doors import serve_door

from .conftest import BASE, Kit, asgi_client

pytestmark = pytest.mark.anyio

MODERN = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}
FACES = ("v1", "remote transport", "mcp legacy", "mcp 2026-07-28")


def _walkarounds() -> list[tuple[str, str]]:
    """(guarded, walker): every other tool an approval required of ``guarded`` guards,
    as the registry's declared effects say."""
    return sorted(
        (guarded.name, walker)
        for guarded in SURFACE.tools
        for walker in SURFACE.guarded({guarded.name})
        if walker != guarded.name
    )


PAIRS = _walkarounds()


def test_the_pairs_come_from_the_declared_effects() -> None:
    # the attack of the issue is among them, and so is closing through a grade
    assert ("kestrel_grade", "kestrel_proof") in PAIRS
    assert ("kestrel_session_close", "kestrel_grade") in PAIRS
    # every tool that closes or grades a session declares it (a new one that forgets
    # to would walk around an approval unseen)
    for tool in SURFACE.tools:
        if tool.destructive:
            assert tool.effects, tool.name
        if tool.read_only:
            assert not tool.effects, tool.name


async def _call(client: httpx.AsyncClient, face: str, tool: Tool, args: dict[str, Any]) -> Any:
    """``tool`` on ``face``: its structured result, or the refusal (code, message, detail)."""
    if face == "remote transport":
        transport = remote_transport(BASE, None, client=client)
        try:
            found = await transport.invoke(tool, tool.parse(args))
        except KestrelError as exc:
            return {"code": exc.code, "message": exc.message, "detail": exc.detail}
        return found.to_json()
    if face == "v1":
        route = tool.route
        assert route is not None
        path = route.path
        for wire, param in route.params.items():
            path = path.replace("{" + param + "}", str(args[wire]))
        body = {k: v for k, v in args.items() if k not in route.params}
        resp = await client.request(route.method, path, json=body if route.body != "none" else None)
        data = resp.json()
        if resp.status_code >= 400:
            return data["refusal"] | {"status": resp.status_code}
        return data
    params: dict[str, Any] = {"name": tool.name, "arguments": args}
    headers = {"Accept": "application/json, text/event-stream"}
    if face == "mcp 2026-07-28":
        params["_meta"] = MODERN
        headers |= {
            "MCP-Protocol-Version": "2026-07-28",
            "Mcp-Method": "tools/call",
            "Mcp-Name": tool.name,
        }
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}
    result = (await client.post("/mcp", json=message, headers=headers)).json()["result"]
    data = result["structuredContent"]
    return data["refusal"] if result.get("isError") else data


@pytest.mark.parametrize(("guarded", "walker"), PAIRS)
async def test_a_tool_with_the_guarded_effect_asks_the_same_approval(
    kit: Kit, guarded: str, walker: str
) -> None:
    policy = RequireApproval(kit.store, frozenset({guarded}))
    app = kit.runtime_app(approval=policy)
    tool = SURFACE.tool(walker)
    async with asgi_client(app, kit.token("alice")) as client:
        for face in FACES:
            opened = await client.post("/v1/sessions", json={"scenario": "acme-trend"})
            sid = opened.json()["sessionId"]
            traded = await client.post(
                f"/v1/sessions/{sid}/submit", json={"source": "buy 10 ACME\nadvance 3\n"}
            )
            assert traded.status_code == 200, traded.text

            refused = await _call(client, face, tool, {"sessionId": sid})
            status = refused.pop("status", 403)
            assert (status, refused) == (
                403,
                {
                    "code": "APPROVAL_REQUIRED",
                    "message": APPROVAL_MESSAGE,
                    "detail": {"tool": walker},
                },
            ), face
            # nothing happened: the session is neither closed nor graded
            frame = await client.get(f"/v1/sessions/{sid}/frame")
            assert frame.json()["frame"]["status"] == "open", face
            more = await client.post(f"/v1/sessions/{sid}/submit", json={"source": "advance 1"})
            assert more.status_code == 200, (face, more.text)

            # the operator's yes (the refusal's detail.tool) lets the one retry through
            policy.grant("alice", walker)
            done = await _call(client, face, tool, {"sessionId": sid})
            assert done.get("kind") in ("kestrel.grade", "kestrel.proof", "kestrel.session"), (
                face,
                done,
            )
            frame = await client.get(f"/v1/sessions/{sid}/frame")
            assert frame.json()["frame"]["status"] == "closed", face
    refusals = [r for r in kit.audit.rows() if r.tool == walker]
    assert [r.outcome for r in refusals] == ["APPROVAL_REQUIRED", "ok"] * len(FACES)


async def test_an_unknown_tool_is_refused_at_start_and_an_alias_guards_its_tool(kit: Kit) -> None:
    with pytest.raises(ValueError, match="no tool 'kestrel_grades'"):
        RequireApproval(kit.store, frozenset({"kestrel_grades"}))
    assert "kestrel_proof" in RequireApproval(kit.store, frozenset({"kestrel.grade"})).tools


def _audit(home: Path) -> list[dict[str, Any]]:
    done = CliRunner().invoke(door_group, ["--home", str(home), "audit", "--json"])
    assert done.exit_code == 0, done.output
    rows: list[dict[str, Any]] = json.loads(done.output)
    return rows


def test_served_door_proof_under_an_approval_on_grade(tmp_path: Path) -> None:
    """The attack as reported: ``kestrel-door serve --require-approval kestrel_grade``,
    then ``kestrel_proof``, which graded and closed the session without approval."""
    home = tmp_path / "door"
    with serve_door(home, "--require-approval", "kestrel_grade") as door:
        auth = {"Authorization": f"Bearer {door.token}"}
        with httpx.Client(base_url=door.url, headers=auth, timeout=60) as client:
            sid = client.post("/v1/sessions", json={"scenario": "acme-trend"}).json()["sessionId"]
            client.post(f"/v1/sessions/{sid}/submit", json={"source": "buy 10 ACME\nadvance 3"})
            graded = client.post(f"/v1/sessions/{sid}/grade")
            proof = client.get(f"/v1/sessions/{sid}/proof")
            call = {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "tools/call",
                "params": {"name": "kestrel_proof", "arguments": {"sessionId": sid}},
            }
            mcp = client.post(
                "/mcp", json=call, headers={"Accept": "application/json, text/event-stream"}
            )
            frame = client.get(f"/v1/sessions/{sid}/frame").json()["frame"]
    assert graded.json()["refusal"]["code"] == "APPROVAL_REQUIRED"
    assert proof.status_code == 403, proof.text
    assert proof.json()["refusal"] == {
        "code": "APPROVAL_REQUIRED",
        "message": APPROVAL_MESSAGE,
        "detail": {"tool": "kestrel_proof"},
    }
    assert mcp.json()["result"]["structuredContent"]["refusal"]["code"] == "APPROVAL_REQUIRED"
    assert frame["status"] == "open"
    outcomes = [(r["tool"], r["outcome"]) for r in _audit(home)]
    assert ("kestrel_proof", "ok") not in outcomes
    assert outcomes.count(("kestrel_proof", "APPROVAL_REQUIRED")) == 2


def test_serve_refuses_an_approval_of_a_tool_it_does_not_have(tmp_path: Path) -> None:
    ran = subprocess.run(
        [
            *(sys.executable, "-c", "from kestrel_door.cli import main; main()"),
            *("--home", str(tmp_path), "serve", "--port", "0"),
            *("--require-approval", "kestrel_grades"),
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert ran.returncode == 2, ran.stderr
    assert "no tool 'kestrel_grades'" in ran.stderr
