"""``kestrel_session_list``: the caller's sessions on every face (issue 50).

An agent (or its operator) that lost a session id had no way to find it: no face listed
sessions. Now alice, with sessions on acme-trend (graded) and on a sealed scenario (mid
tape), lists them through the door's ``/v1`` and ``/mcp``, stdio MCP, both SDK
transports and ``kestrel sessions``, and every face gives the same list: ids, scenario,
label, status, clock (the sealed one's without ``remaining``) and the grade root. Bob,
on the same door, sees only his own. Pages hold 100; the cursor walks them in order and a
forged cursor is refused naming it.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner
from kestrel_door import AuditLog, DoorConfig, DoorStore, IssuedTokens, create_door_app
from kestrel_mcp import create_kestrel_mcp_server
from kestrel_protocol import GradeResult
from kestrel_protocol.surface import ALL_SCOPES
from kestrel_sdk import create_sdk, local_transport, remote_transport
from kestrel_sdk.cli import cli
from kestrel_sdk.runtime import Runtime

pytestmark = pytest.mark.anyio

BASE = "http://127.0.0.1:8787"
ROOT = Path(__file__).resolve().parents[1]
SHIPPED = ROOT / "packages/kestrel-sdk/src/kestrel_sdk/catalog_data"
TOOL = "kestrel_session_list"


def _sealed_catalog(root: Path) -> Path:
    """A user catalog holding ``acme-sealed``: acme-trend's tape and terms, sealed."""
    directory = root / "acme-sealed"
    directory.mkdir(parents=True)
    shutil.copy(SHIPPED / "acme-trend" / "tape.csv", directory / "tape.csv")
    toml = (SHIPPED / "acme-trend" / "scenario.toml").read_text("utf-8")
    toml = toml.replace('id = "acme-trend"', 'id = "acme-sealed"')
    (directory / "scenario.toml").write_text("sealed = true\n" + toml, "utf-8")
    return root


async def test_every_face_lists_only_the_callers_sessions_the_sealed_one_by_its_clock(
    tmp_path: Path,
) -> None:
    catalog = _sealed_catalog(tmp_path / "catalog")
    owner: Any = local_transport(home=tmp_path / "home", catalog_paths=[catalog])
    runtime = owner.runtime
    alice = create_sdk(local_transport(principal="alice", runtime=runtime))
    bob = create_sdk(local_transport(principal="bob", runtime=runtime))

    trend = (await alice.open_session("acme-trend", "graded")).session
    sealed = (await alice.open_session("acme-sealed", "mid-tape")).session
    theirs = (await bob.open_session("acme-trend", "bobs")).session
    assert trend is not None
    assert sealed is not None
    assert theirs is not None
    await trend.submit("buy 10 ACME\nadvance 30")
    grade = await alice.grade(trend.id)
    assert isinstance(grade, GradeResult)
    await sealed.submit("advance 1200")

    store = DoorStore(tmp_path / "door.db")
    tokens = IssuedTokens(store)
    app = create_door_app(
        DoorConfig(base_url=BASE),
        transport_for=lambda p: local_transport(principal=p, runtime=runtime),
        grant_verifiers=[tokens],
        audit=AuditLog(store),
    )
    token = tokens.issue("alice", list(ALL_SCOPES))[1]
    bob_token = tokens.issue("bob", list(ALL_SCOPES))[1]
    http = httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=BASE)
    auth = {"Authorization": f"Bearer {token}"}

    listed = (await alice.sessions()).to_json()
    assert listed["kind"] == "kestrel.sessions"
    assert "nextCursor" not in listed
    by_id = {entry["session"]: entry for entry in listed["sessions"]}
    assert list(by_id) == [trend.id, sealed.id]  # oldest first; bob's is not there
    graded = by_id[trend.id]
    assert graded["scenario"]["id"] == "acme-trend"
    assert (graded["label"], graded["status"], graded["grade"]) == ("graded", "closed", grade.root)
    assert graded["clock"]["bar"] == 30
    assert graded["clock"]["remaining"] == 2520 - 1 - 30
    mid = by_id[sealed.id]
    assert (mid["label"], mid["status"]) == ("mid-tape", "open")
    assert mid["clock"]["bar"] == 1200
    assert "remaining" not in mid["clock"]  # the tape's length stays sealed
    assert "grade" not in mid

    v1 = await http.get("/v1/sessions", headers=auth)
    assert v1.status_code == 200, v1.text
    params: dict[str, Any] = {"name": TOOL, "arguments": {}}
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}
    door_mcp = (await http.post("/mcp", json=message, headers=auth)).json()
    stdio = create_kestrel_mcp_server(alice.transport, secrets=False)
    stdio_mcp = await stdio.handle(message)
    remote = create_sdk(remote_transport(BASE, token, client=http))
    assert v1.json() == listed
    assert door_mcp["result"]["structuredContent"] == listed
    assert stdio_mcp is not None
    assert stdio_mcp["result"]["structuredContent"] == listed
    assert (await remote.sessions()).to_json() == listed

    bobs = await http.get("/v1/sessions", headers={"Authorization": f"Bearer {bob_token}"})
    assert [e["session"] for e in bobs.json()["sessions"]] == [theirs.id]

    forged = await http.get("/v1/sessions", params={"cursor": "o999"}, headers=auth)
    assert forged.status_code == 400
    refusal = forged.json()["refusal"]
    assert refusal["code"] == "INVALID_ARGUMENT"
    assert "cursor 'o999'" in refusal["message"]
    await http.aclose()
    await owner.aclose()


def test_pages_of_a_hundred_walk_every_session_once(tmp_path: Path) -> None:
    runtime = Runtime(tmp_path / "home")
    opened = [runtime.open_session("carol", "acme-chop", f"s{n}").session_id for n in range(205)]
    seen: list[str | None] = []
    cursor = None
    pages = 0
    while True:
        page = runtime.sessions("carol", cursor)
        pages += 1
        seen.extend(entry.session for entry in page.sessions)
        cursor = page.next_cursor
        if cursor is None:
            break
    assert pages == 3
    assert seen == opened
    runtime.shutdown()


def test_kestrel_sessions_lists_the_local_sessions(tmp_path: Path) -> None:
    home = tmp_path / "home"
    program = ROOT / "examples" / "trend.kes"
    ran = CliRunner().invoke(
        cli, ["--home", str(home), "run", str(program), "--scenario", "acme-trend", "--json"]
    )
    assert ran.exit_code == 0, ran.stderr
    sid = json.loads(ran.stdout)["session"]
    table = CliRunner().invoke(cli, ["--home", str(home), "sessions"])
    assert table.exit_code == 0, table.stderr
    [row] = [line for line in table.stdout.splitlines() if sid in line]
    assert row.split()[1:4] == ["acme-trend", "1", "closed"]
    assert row.split()[-1] == "yes"
    data = json.loads(CliRunner().invoke(cli, ["--home", str(home), "sessions", "--json"]).stdout)
    assert [e["session"] for e in data["sessions"]] == [sid]
