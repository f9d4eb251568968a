"""A store outage under a running door: 503 with Retry-After, never 401, and recovery by
itself; the store's password never printed, its whereabouts never told to a client."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from tests import postgres
from tests.loopback import free_port
from tests.peers import INSTALL_SERVICES, require_peer
from tests.reliability.support import issue_token, kill, start_door

PASSWORD = "hun?ter#2"  # unencoded ? and #: a URL splitter that guesses leaks part of it


@pytest.fixture
def own_cluster() -> Iterator[postgres.Cluster]:
    """A cluster of this test's own (the test stops and restarts it)."""
    why = postgres.missing()
    require_peer(None if why else True, what=f"PostgreSQL ({why})", install=INSTALL_SERVICES)
    with postgres.cluster() as started:
        yield started


def _statuses(door: str, token: str, sid: str) -> dict[str, httpx.Response]:
    auth = {"Authorization": f"Bearer {token}"}
    mcp = {**auth, "Accept": "application/json, text/event-stream"}
    call = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "kestrel_frame", "arguments": {"session": sid}},
    }
    return {
        "frame": httpx.get(f"{door}/v1/sessions/{sid}/frame", headers=auth, timeout=60),
        "catalog": httpx.get(f"{door}/v1/catalog", headers=auth, timeout=60),
        "mcp": httpx.post(f"{door}/mcp", json=call, headers=mcp, timeout=60),
        "bad-token": httpx.get(
            f"{door}/v1/catalog",
            headers={"Authorization": "Bearer kestrel_tok_" + "x" * 43},
            timeout=60,
        ),
    }


def test_an_outage_is_503_then_the_door_recovers_and_never_says_401(
    own_cluster: postgres.Cluster, tmp_path: Path
) -> None:
    port = own_cluster.port
    dsn = f"postgresql://kestrel:{PASSWORD}@127.0.0.1:{port}/kestrel?application_name=door"
    home = tmp_path / "home"
    home.mkdir()
    token = issue_token(home, "alice", store=dsn)
    door = start_door(home, free_port(), store=dsn)
    seen: list[tuple[str, int]] = []
    try:
        base, auth = door.base, {"Authorization": f"Bearer {token}"}
        opened = httpx.post(
            f"{base}/v1/sessions", json={"scenario": "acme-trend"}, headers=auth, timeout=60
        )
        assert opened.status_code == 200, opened.text
        sid = opened.json()["sessionId"]
        submitted = httpx.post(
            f"{base}/v1/sessions/{sid}/submit",
            json={"source": "advance 3"},
            headers=auth,
            timeout=60,
        )
        assert submitted.status_code == 200, submitted.text

        own_cluster.stop()
        down = _statuses(base, token, sid)
        seen += [(k, r.status_code) for k, r in down.items()]
        for name, response in down.items():
            assert response.status_code == 503, (name, response.text)
            assert int(response.headers["Retry-After"]) > 0
            text = response.text
            for secret in ("127.0.0.1", str(port), "kestrel:", "hun", "application_name"):
                assert secret not in text, (name, text)
        refusal = down["frame"].json()["refusal"]
        assert (refusal["code"], refusal["message"]) == ("BACKEND_UNAVAILABLE", "store unavailable")

        own_cluster.start()
        deadline = time.monotonic() + 60
        while True:  # the first requests after the restart: 503 at worst, never 401
            up = _statuses(base, token, sid)
            seen += [(k, r.status_code) for k, r in up.items()]
            if all(r.status_code in (200, 401) for r in up.values()):
                break
            assert time.monotonic() < deadline, seen
            time.sleep(0.2)
        assert [s for k, s in seen if k != "bad-token" and s == 401] == []
        assert up["frame"].json()["frame"]["seq"] == 1  # the session survived the outage
        assert up["mcp"].status_code == 200
        assert up["bad-token"].status_code == 401  # judged once the store answered
        log = door.log()
        assert "kestrel:***@127.0.0.1" in log  # the banner: the operator sees where
        assert "hun" not in log
        assert "ter#2" not in log
    finally:
        kill(door.proc)


def test_a_door_that_cannot_reach_its_store_says_where_without_the_password(
    tmp_path: Path,
) -> None:
    from click.testing import CliRunner
    from kestrel_door.cli import door_group

    dsn = f"postgresql://kestrel:{PASSWORD}@127.0.0.1:{free_port()}/kestrel"
    ran: Any = CliRunner().invoke(door_group, ["--store", dsn, "token", "list"])
    assert ran.exit_code != 0
    assert "kestrel:***@127.0.0.1" in ran.output
    assert "hun" not in ran.output


@pytest.mark.anyio
async def test_a_runtime_store_outage_is_503_on_v1_and_a_transport_error_on_mcp(
    own_cluster: postgres.Cluster, tmp_path: Path
) -> None:
    """The door's records answer (SQLite) while the runtime's store is down: a tool call
    is then HTTP 503 with Retry-After on /v1 and on /mcp, and works again after."""
    from kestrel_door import AuditLog, DoorConfig, DoorStore, IssuedTokens, create_door_app
    from kestrel_sdk import local_transport
    from kestrel_sdk.runtime.service import Runtime
    from kestrel_sdk.runtime.stores import open_runtime_store

    from tests.loopback import serve

    runtime = Runtime(tmp_path / "home", store=open_runtime_store(own_cluster.dsn))
    records = DoorStore(tmp_path / "door.db")
    tokens = IssuedTokens(records)
    token = tokens.issue("alice", ["kestrel:read", "kestrel:trade"])[1]
    app = create_door_app(
        DoorConfig(base_url="http://127.0.0.1"),
        transport_for=lambda p: local_transport(principal=p, runtime=runtime),
        grant_verifiers=[tokens],
        audit=AuditLog(records),
    )
    auth = {"Authorization": f"Bearer {token}"}
    call = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "kestrel_session_open", "arguments": {"scenario": "acme-trend"}},
    }
    mcp_headers = {**auth, "Accept": "application/json, text/event-stream"}
    try:
        async with serve(app) as base, httpx.AsyncClient(base_url=base, timeout=60) as client:
            opened = await client.post(
                "/v1/sessions", json={"scenario": "acme-trend"}, headers=auth
            )
            assert opened.status_code == 200, opened.text
            own_cluster.stop()
            v1 = await client.post(
                "/v1/sessions", json={"scenario": "acme-trend", "label": "b"}, headers=auth
            )
            mcp = await client.post("/mcp", json=call, headers=mcp_headers)
            for response in (v1, mcp):
                assert response.status_code == 503, response.text
                assert int(response.headers["Retry-After"]) > 0
                assert str(own_cluster.port) not in response.text
            assert mcp.json()["result"]["structuredContent"]["refusal"]["message"] == (
                "store unavailable"
            )
            own_cluster.start()
            for _ in range(300):  # the pool reconnects by itself
                again = await client.post("/mcp", json=call, headers=mcp_headers)
                if again.status_code == 200:
                    break
                assert again.status_code == 503
                await anyio.sleep(0.1)
            assert again.json()["result"]["isError"] is False
    finally:
        runtime.shutdown()
        records.close()
