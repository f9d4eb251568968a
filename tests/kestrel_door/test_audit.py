from __future__ import annotations

import logging
import sqlite3
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from kestrel_door import (
    AuditLog,
    DoorStore,
    DoorTurnTools,
    RequireApproval,
    VoucherGate,
    VoucherSigner,
    argument_digest,
    load_voucher_key,
)
from kestrel_door.door_tools import APPROVAL_MESSAGE
from kestrel_protocol.ports import LiveTurn, RunContext
from kestrel_protocol.surface import ALL_SCOPES

from .conftest import Kit, asgi_client

pytestmark = pytest.mark.anyio


def test_digest_is_stable_and_hides_arguments() -> None:
    a = argument_digest({"source": "buy 10 ACME", "sessionId": "ks_1"})
    assert a == argument_digest({"sessionId": "ks_1", "source": "buy 10 ACME"})
    assert a.startswith("sha256:")
    assert "ACME" not in a


async def test_one_row_per_call_and_append_only(kit: Kit) -> None:
    async with asgi_client(kit.app(), kit.token("alice", ("kestrel:read",))) as client:
        await client.get("/v1/catalog")
        await client.post("/v1/sessions", json={"scenario": "acme-trend"})
        await client.post(
            "/mcp",
            json={
                "jsonrpc": "2.0",
                "id": 1,
                "method": "tools/call",
                "params": {"name": "kestrel_catalog"},
            },
        )
    rows = kit.audit.rows()
    assert [(r.principal, r.venue, r.tool, r.outcome) for r in rows] == [
        ("alice", "http", "kestrel_catalog", "ok"),
        ("alice", "http", "kestrel_session_open", "FORBIDDEN"),
        ("alice", "mcp", "kestrel_catalog", "ok"),
    ]
    assert all(r.time.endswith("Z") for r in rows)
    db = sqlite3.connect(kit.store.path)
    with pytest.raises(sqlite3.DatabaseError):
        db.execute("UPDATE audit SET outcome = 'ok'")
    with pytest.raises(sqlite3.DatabaseError):
        db.execute("DELETE FROM audit")
    db.close()


async def test_approval_required_then_resolved_in_product(kit: Kit) -> None:
    policy = RequireApproval(kit.store, frozenset({"kestrel_session_open"}))
    async with asgi_client(kit.app(approval=policy), kit.token("alice")) as client:
        resp = await client.post("/v1/sessions", json={"scenario": "acme-trend"})
        assert resp.status_code == 403
        assert resp.json()["refusal"]["code"] == "APPROVAL_REQUIRED"
        assert "resolve it in the product and retry" in resp.json()["refusal"]["message"]
        assert resp.json()["refusal"]["message"] == APPROVAL_MESSAGE
        policy.grant("alice", "kestrel_session_open")
        assert (
            await client.post("/v1/sessions", json={"scenario": "acme-trend"})
        ).status_code == 200
        # one-shot: the next open asks again
        resp = await client.post("/v1/sessions", json={"scenario": "acme-trend"})
        assert resp.json()["refusal"]["code"] == "APPROVAL_REQUIRED"


async def test_canary_token_never_in_responses_logs_or_audit(
    kit: Kit, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    token = kit.token("alice")
    canary = token[len("kestrel_tok_") :]
    forged = "kestrel_tok_" + "C" * 43
    turn_forged = "kestrel_turn_" + "C" * 43
    turn_tools = DoorTurnTools(
        RunContext("harness", "present", "host", frozenset(ALL_SCOPES)),
        kit.transport_for("host"),
        audit=kit.audit,
    )
    kit.creds.publish("t", LiveTurn(turn_tools.ctx, turn_tools))
    turn_token = kit.creds.mint("t")
    assert turn_token is not None
    signer = VoucherSigner(load_voucher_key(kit.home))
    voucher = signer.issue()
    seen_downstream: list[Any] = []

    class _Recording:
        """Records every call that reaches the transport (the runtime behind the door)."""

        def __init__(self, inner: Any) -> None:
            self._inner = inner

        def __getattr__(self, name: str) -> Any:
            method = getattr(self._inner, name)

            async def call(*args: Any) -> Any:
                seen_downstream.append((name, args))
                return await method(*args)

            return call

    from kestrel_sdk import local_transport

    owner: Any = local_transport(
        home=kit.home / "runtime", gate=VoucherGate(kit.store, signer, daily_quota=0)
    )
    kit.runtimes.append(owner)
    bodies: list[bytes] = []
    app = kit.app(
        transport_for=lambda p: _Recording(local_transport(principal=p, runtime=owner.runtime))
    )
    for bearer in (token, forged, turn_forged, turn_token):
        async with asgi_client(app, bearer, Accept="application/json") as client:
            for method, path, body in (
                ("GET", "/v1/catalog", None),
                ("POST", "/v1/sessions", {"scenario": "acme-trend", "label": "x"}),
                ("POST", "/v1/validate", {"source": "buy 1 ACME\n"}),
                ("GET", "/v1/sessions/ks_none/frame", None),
                (
                    "POST",
                    "/mcp",
                    {
                        "jsonrpc": "2.0",
                        "id": 1,
                        "method": "tools/call",
                        "params": {"name": "kestrel_catalog"},
                    },
                ),
                ("POST", "/mcp", {"jsonrpc": "2.0", "id": 2, "method": "nope"}),
                ("POST", "/mcp", {"jsonrpc": "2.0", "id": 3, "method": "ping"}),
                (
                    "POST",
                    "/v1/sessions",
                    {"scenario": "acme-trend", "payment": {"offerId": "of_x", "voucher": voucher}},
                ),
            ):
                resp = await client.request(method, path, json=body)
                bodies.append(resp.content)
                bodies.append(repr(resp.headers).encode())
    everything = b"\n".join(bodies).decode("utf-8", "replace")
    everything += "\n".join(r.getMessage() for r in caplog.records)
    everything += repr([r.to_json() for r in kit.audit.rows()])
    db = sqlite3.connect(kit.store.path)
    everything += repr(db.execute("SELECT * FROM tokens").fetchall())
    everything += repr(db.execute("SELECT * FROM audit").fetchall())
    db.close()
    everything += repr(kit.sessions.__dict__)
    bearers = (canary, "C" * 43, turn_token[len("kestrel_turn_") :])
    for secret in (*bearers, voucher.split(".")[-1]):
        assert secret not in everything
    # No bearer goes downstream. The voucher does: it is the payment, and the session
    # gate that spends it is the runtime's (docs/spec.md §10), behind the transport.
    for secret in bearers:
        assert secret not in repr(seen_downstream)
    assert seen_downstream  # the runtime was reached, with no token in what it saw
    assert {r.principal for r in kit.audit.rows()} == {"alice", "host"}


class _CountedCommits(DoorStore):
    """The door's store, counting the commits that write audit rows."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.commits = 0
        self._inside = False

    def add_audit(self, **row: Any) -> None:
        self._count(super().add_audit, **row)

    def add_audits(self, rows: Any) -> None:
        self._count(super().add_audits, rows)

    def _count(self, write: Any, *args: Any, **kwargs: Any) -> None:
        outermost = not self._inside
        self.commits += outermost
        self._inside = True
        try:
            write(*args, **kwargs)
        finally:
            self._inside = not outermost


async def test_concurrent_calls_share_commits_each_row_in_before_its_answer(
    kit: Kit, tmp_path: Path
) -> None:
    """32 clients at once: every call has its row, committed (seen by another connection)
    before its answer arrives, in fewer commits than calls."""
    store = _CountedCommits(tmp_path / "audit.db")
    seen = sqlite3.connect(store.path)
    calls = 32
    answered: list[int] = []

    async def call(client: httpx.AsyncClient, n: int) -> None:
        body = {"jsonrpc": "2.0", "id": n, "method": "tools/call"}
        answer = await client.post("/mcp", json={**body, "params": {"name": "kestrel_catalog"}})
        assert answer.status_code == 200
        (rows,) = seen.execute("SELECT count(*) FROM audit").fetchone()
        answered.append(rows)
        assert rows >= len(answered)  # this call's row, and every row answered before it

    token = kit.token("alice", ("kestrel:read",))
    app = kit.app(audit=AuditLog(store))
    async with asgi_client(app, token) as client, anyio.create_task_group() as tg:
        for n in range(calls):
            tg.start_soon(call, client, n)
    rows = AuditLog(store).rows(limit=100)
    assert [(r.principal, r.venue, r.tool, r.outcome) for r in rows] == [
        ("alice", "mcp", "kestrel_catalog", "ok")
    ] * calls
    assert [r.seq for r in rows] == sorted(r.seq for r in rows)
    assert store.commits < calls, "each call's row was a commit of its own"
    seen.close()
    store.close()


class _Unwritable(DoorStore):
    """A door store whose audit table cannot be written (a disk that is full)."""

    def add_audit(self, **row: Any) -> None:
        raise sqlite3.OperationalError("database or disk is full")

    def add_audits(self, rows: Any) -> None:
        raise sqlite3.OperationalError("database or disk is full")


async def test_calls_whose_rows_cannot_be_written_are_answered_and_each_logged(
    kit: Kit, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    store = _Unwritable(tmp_path / "audit.db")
    token = kit.token("alice", ("kestrel:read",))
    statuses: list[int] = []

    async def call(client: httpx.AsyncClient, n: int) -> None:
        body = {"jsonrpc": "2.0", "id": n, "method": "tools/call"}
        answer = await client.post("/mcp", json={**body, "params": {"name": "kestrel_catalog"}})
        statuses.append(answer.status_code)

    app = kit.app(audit=AuditLog(store))
    with caplog.at_level(logging.ERROR, logger="kestrel_door"):
        async with asgi_client(app, token) as client, anyio.create_task_group() as tg:
            for n in range(8):
                tg.start_soon(call, client, n)
    assert statuses == [200] * 8
    lost = [r for r in caplog.records if "audit row could not be written" in r.getMessage()]
    assert len(lost) == 8
    store.close()
