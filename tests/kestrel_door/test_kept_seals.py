"""A ``--seal`` is kept by the door's store, so every replica on it seals the scenario
(issue 48, session 18).

Seals were per process: a replica started without ``--seal`` on the store of a door
sealing acme-chop served its tape (``/v1`` and ``/mcp``) and the proofs on its board to
agents trading it through the other replica. ``serve --seal`` now keeps each seal in the
store (SQLite or PostgreSQL, a store made before the table gaining it); every ``serve``
seals what the store keeps; ``kestrel-door unseal ID`` removes it. Two doors serve one
home on 127.0.0.1, each in its own process.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner, Result
from kestrel_door.cli import door_group
from kestrel_door.postgres import PostgresDoorStore
from kestrel_door.seal_records import SqlSealRecords
from kestrel_door.store import DoorStore

from tests.doors import MCP_HEADERS, Door, serve_door

TAPE = "kestrel://catalog/scenarios/acme-chop/tape"


def _door(home: Path, *args: str) -> Result:
    return CliRunner().invoke(door_group, ["--home", str(home), *args])


def _tape(door: Door) -> tuple[httpx.Response, httpx.Response]:
    """The tape of acme-chop asked of ``door`` over ``/v1`` and ``/mcp``."""
    auth = {"Authorization": f"Bearer {door.token}"}
    v1 = httpx.get(f"{door.url}/v1/catalog/scenarios/acme-chop/tape", headers=auth, timeout=60)
    read = {"jsonrpc": "2.0", "id": 1, "method": "resources/read", "params": {"uri": TAPE}}
    mcp = httpx.post(f"{door.url}/mcp", json=read, headers={**auth, **MCP_HEADERS}, timeout=60)
    return v1, mcp


def test_a_replica_without_seal_seals_what_the_store_keeps(tmp_path: Path) -> None:
    home = tmp_path / "door"
    with serve_door(home, "--seal", "acme-chop") as sealing:
        with serve_door(home) as replica:  # started after, without --seal, beside it
            on_replica = _tape(replica)
            catalog = httpx.get(
                f"{replica.url}/v1/catalog",
                headers={"Authorization": f"Bearer {replica.token}"},
                timeout=60,
            ).json()
            board = httpx.get(f"{replica.url}/board/proofs.json", timeout=60).json()
        on_sealing = _tape(sealing)
    for v1, mcp in (on_replica, on_sealing):
        assert v1.status_code == 403, v1.text
        assert v1.json()["refusal"]["code"] == "SCENARIO_SEALED"
        assert "SCENARIO_SEALED" in mcp.text
        assert "time,symbol" not in mcp.text  # no bar of it
    [chop] = [s for s in catalog["scenarios"] if s["id"] == "acme-chop"]
    assert chop["sealed"] is True
    assert board["sealed"] == ["acme-chop"]  # its proofs withheld on this board too

    unsealed = _door(home, "unseal", "acme-chop")
    assert unsealed.exit_code == 0, unsealed.output
    again = _door(home, "unseal", "acme-chop")
    assert again.exit_code != 0
    assert "keeps no seal of 'acme-chop'" in again.output
    with serve_door(home) as restarted:
        v1, mcp = _tape(restarted)
    assert v1.status_code == 200, v1.text
    assert v1.text.startswith("time,symbol")
    assert "time,symbol" in mcp.text


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_the_seals_are_kept_in_either_store(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    store: SqlSealRecords
    if backend == "sqlite":
        made = DoorStore(tmp_path / "door.db")  # a file made before the table: gains it
        made.close()
        with sqlite3.connect(tmp_path / "door.db") as before:
            before.execute("DROP TABLE seals")
        store = DoorStore(tmp_path / "door.db")
    else:
        store = PostgresDoorStore(request.getfixturevalue("postgres_dsn"))
    try:
        store.keep_seals([("acme-trend", None), ("acme-chop", "tape-9")])
        store.keep_seals([("acme-trend", "tape-3")])  # sealed again, under another id
        assert store.kept_seals() == [("acme-chop", "tape-9"), ("acme-trend", "tape-3")]
        assert store.remove_seal("tape-9") is True  # by the id it is served under
        assert store.remove_seal("acme-chop") is False
        assert store.remove_seal("acme-trend") is True
        assert store.kept_seals() == []
    finally:
        store.close()
