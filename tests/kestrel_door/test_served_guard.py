"""Every door method passes the guard, against a running door, as a new user would try it.

* ``kestrel-door serve --daily-quota 1`` as a subprocess with issued tokens: a
  ``kestrel:trade``-only token gets 403 ``insufficient_scope`` on ``resources/read`` of
  the catalog, a tape and an artifact, and on every listing; a read-only token reads
  them; each refused attempt has an audit row. Re-opening an open label returns the
  same session id with no Offer and spends no voucher.
* A door on loopback with turn credentials: a deny-all turn's credential reads nothing
  through ``/mcp`` or ``/v1``, and every attempt is an audit row of the turn's own.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner
from kestrel_door import (
    AuditLog,
    DoorConfig,
    DoorStore,
    DoorTurnTools,
    create_door_app,
    create_turn_credentials,
)
from kestrel_door.approval import Decision
from kestrel_door.cli import door_group
from kestrel_protocol import Offer
from kestrel_protocol.ports import LiveTurn, RunContext
from kestrel_protocol.surface import ALL_SCOPES
from kestrel_sdk import local_transport

from tests.loopback import free_port, serve_built, wait_for_http

ACCEPT = {"Accept": "application/json"}
TAPE = "kestrel://catalog/scenarios/acme-trend/tape"


def _cli(home: Path, *args: str) -> str:
    done = CliRunner().invoke(door_group, ["--home", str(home), *args])
    assert done.exit_code == 0, done.output
    return done.output.strip().splitlines()[-1]


def _audit(home: Path) -> list[dict[str, Any]]:
    done = CliRunner().invoke(
        door_group, ["--home", str(home), "audit", "--json", "--limit", "1000"]
    )
    assert done.exit_code == 0, done.output
    rows: list[dict[str, Any]] = json.loads(done.output)
    return rows


def _rpc(method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 1, "method": method, "params": params or {}}


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    home = tmp_path / "door"
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    door = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "from kestrel_door.cli import main; main()",
            *("--home", str(home), "serve", "--port", str(port), "--daily-quota", "1"),
        ],
        env={**os.environ, "KESTREL_HOME": str(home)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        wait_for_http(base + "/.well-known/oauth-protected-resource", door, timeout=90)
        yield base, home
    finally:
        door.terminate()
        door.wait(timeout=10)


def test_scopes_guard_every_method_of_a_served_door(served: tuple[str, Path]) -> None:
    base, home = served
    everything = _cli(home, "token", "issue", "--principal", "alice", "--scope", *ALL_SCOPES)
    trade = _cli(home, "token", "issue", "--principal", "alice", "--scope", "kestrel:trade")
    read = _cli(home, "token", "issue", "--principal", "alice", "--scope", "kestrel:read")

    with httpx.Client(base_url=base, headers=ACCEPT, timeout=60) as http:
        auth = {"Authorization": f"Bearer {everything}"}
        opened = http.post(
            "/v1/sessions", json={"scenario": "acme-trend", "label": "q"}, headers=auth
        )
        assert opened.status_code == 200, opened.text
        sid = opened.json()["sessionId"]
        submitted = http.post(
            f"/v1/sessions/{sid}/submit", json={"source": "advance 1\n"}, headers=auth
        ).json()
        artifact = "kestrel://artifacts/" + submitted["pentad"]["root"]

        def mcp(token: str, method: str, params: dict[str, Any] | None = None) -> httpx.Response:
            return http.post(
                "/mcp", json=_rpc(method, params), headers={"Authorization": f"Bearer {token}"}
            )

        reads: list[tuple[str, dict[str, Any]]] = [
            ("resources/read", {"uri": uri}) for uri in ("kestrel://catalog", TAPE, artifact)
        ]
        listings: list[tuple[str, dict[str, Any]]] = [
            ("resources/list", {}),
            ("resources/templates/list", {}),
            ("tools/list", {}),
            (
                "completion/complete",
                {
                    "ref": {"type": "ref/resource", "uri": "kestrel://catalog/scenarios/{id}"},
                    "argument": {"name": "id", "value": "ac"},
                },
            ),
        ]
        before = len(_audit(home))
        for method, params in (*reads, *listings):
            refused = mcp(trade, method, params)
            assert refused.status_code == 403, (method, refused.text)
            challenge = refused.headers["www-authenticate"]
            assert 'error="insufficient_scope"' in challenge
            assert 'scope="kestrel:read"' in challenge
            refusal = refused.json()["error"]["data"]["refusal"]
            assert refusal["code"] == "FORBIDDEN"
            assert refusal["detail"]["requiredScope"] == "kestrel:read"
        for method, params in reads:
            found = mcp(read, method, params)
            assert found.status_code == 200, found.text
            assert found.json()["result"]["contents"][0]["text"]
        tape = mcp(read, *reads[1]).json()["result"]["contents"][0]
        assert tape["mimeType"] == "text/csv"
        assert (
            tape["text"]
            == http.get(
                "/v1/catalog/scenarios/acme-trend/tape", headers={"Authorization": f"Bearer {read}"}
            ).text
        )
        assert (
            http.get("/v1/catalog", headers={"Authorization": f"Bearer {trade}"}).status_code == 403
        )

        # quota 1, already spent on "q": re-opening "q" resumes with no Offer, spends nothing
        again = http.post(
            "/v1/sessions", json={"scenario": "acme-trend", "label": "q"}, headers=auth
        )
        assert again.status_code == 200, again.text
        assert again.json() == {"gated": False, "sessionId": sid}
        gated = http.post(
            "/v1/sessions", json={"scenario": "acme-trend", "label": "r"}, headers=auth
        )
        assert gated.status_code == 402
        offer = Offer.parse(gated.json())
        voucher = _cli(home, "voucher", "issue")
        payment = {"offerId": offer.offer_id, "voucher": voucher}
        resumed = http.post(
            "/v1/sessions",
            json={"scenario": "acme-trend", "label": "q", "payment": payment},
            headers=auth,
        )
        assert resumed.json() == {"gated": False, "sessionId": sid}
        paid = http.post(
            "/v1/sessions",
            json={"scenario": "acme-trend", "label": "r", "payment": payment},
            headers=auth,
        )
        assert paid.status_code == 200, paid.text  # the voucher was still unspent

    rows = _audit(home)
    refused_rows = [r for r in rows[before:] if r["outcome"] == "FORBIDDEN"]
    assert [r["tool"] for r in refused_rows] == [
        "resources/read",
        "resources/read",
        "resources/read",
        "resources/list",
        "resources/templates/list",
        "tools/list",
        "completion/complete",
        "kestrel_catalog",
    ]
    # the read-only token's reads reached the runtime as the calls they project, audited
    reads_ok = [r["tool"] for r in rows[before:] if r["outcome"] == "ok"]
    assert reads_ok[:3] == ["kestrel_catalog", "kestrel_tape", "kestrel_artifact"]


class _DenyAll:
    """The host's policy for this turn: nothing is allowed."""

    def decide(self, ctx: RunContext, tool: str, arguments: Any) -> Decision:
        return "deny"


@pytest.mark.anyio
async def test_a_deny_all_turn_reads_nothing_through_mcp_or_v1(tmp_path: Path) -> None:
    owner: Any = local_transport(home=tmp_path / "rt")
    host_store = DoorStore(tmp_path / "host.db")
    host_audit = AuditLog(host_store)
    creds = create_turn_credentials()
    ctx = RunContext("harness", "present", "host-user", frozenset(ALL_SCOPES))
    tools = DoorTurnTools(
        ctx,
        local_transport(principal="host-user", runtime=owner.runtime),
        audit=host_audit,
        approval=_DenyAll(),
    )
    dispose = creds.publish("thread-1", LiveTurn(ctx, tools))
    token = creds.mint("thread-1")
    assert token is not None
    door_audit = AuditLog(DoorStore(tmp_path / "door.db"))

    def make(base: str) -> Any:
        return create_door_app(
            DoorConfig(base_url=base),
            transport_for=lambda p: local_transport(principal=p, runtime=owner.runtime),
            turn_credentials=creds,
            audit=door_audit,
        )

    attempts: list[tuple[str, dict[str, Any]]] = [
        ("resources/read", {"uri": "kestrel://catalog"}),
        ("resources/read", {"uri": TAPE}),
        ("resources/read", {"uri": "kestrel://artifacts/sha256:" + "a" * 64}),
        ("resources/list", {}),
        (
            "completion/complete",
            {
                "ref": {"type": "ref/resource", "uri": "kestrel://catalog/scenarios/{id}/tape"},
                "argument": {"name": "id", "value": ""},
            },
        ),
        ("tools/call", {"name": "kestrel_catalog", "arguments": {}}),
    ]
    try:
        async with (
            serve_built(make) as base,
            httpx.AsyncClient(
                base_url=base, headers={**ACCEPT, "Authorization": f"Bearer {token}"}
            ) as http,
        ):
            for method, params in attempts:
                body = (await http.post("/mcp", json=_rpc(method, params))).json()
                text = json.dumps(body)
                for leaked in ('"contents"', "statementKinds", "time,symbol", '"values"'):
                    assert leaked not in text, (method, text)
                refusal = (
                    body["result"]["structuredContent"]["refusal"]
                    if "result" in body
                    else body["error"]["data"]["refusal"]
                )
                assert refusal["code"] == "FORBIDDEN", (method, body)
            for path in (
                "/v1/catalog",
                "/v1/catalog/scenarios/acme-trend",
                "/v1/catalog/scenarios/acme-trend/tape",
                "/v1/artifacts/sha256:" + "a" * 64,
            ):
                resp = await http.get(path)
                assert resp.status_code == 403, (path, resp.text)
                assert resp.json()["refusal"]["code"] == "FORBIDDEN"
    finally:
        dispose()
        await owner.aclose()
    rows = host_audit.rows(limit=1000)
    assert [(r.principal, r.outcome) for r in rows] == [("host-user", "FORBIDDEN")] * 10
    assert [r.tool for r in rows] == [
        "kestrel_catalog",
        "kestrel_tape",
        "kestrel_artifact",
        "kestrel_catalog",
        "kestrel_catalog",
        "kestrel_catalog",
        "kestrel_catalog",
        "kestrel_scenario",
        "kestrel_tape",
        "kestrel_artifact",
    ]
    assert door_audit.rows() == []  # the door adds nothing on the turn's path
