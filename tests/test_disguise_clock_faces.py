"""A disguise made by the CLI shows no clock of its source on any face (issue 48).

A US stock's 2019 hours (``tests.exchange_hours``: opening at 13:30 UTC in summer time
and 14:30 in winter, half days closing three hours early) are imported, disguised with
``kestrel scenario disguise`` and served; its tape is read through the SDK (local and
remote), stdio MCP, the door's ``/mcp`` and ``/v1``. On every face each session opens at
one time of day and none closes early: the week of the year and the half days are not
in the clock (their bar counts still are: docs/evaluation.md, "What disguise cannot
hide"). Laid on open days (session 17), every face served 13:30 and 14:30 opens and
three early closes.
"""

from __future__ import annotations

import csv
import io
from collections import Counter
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner
from kestrel_door import AuditLog, DoorConfig, DoorStore, IssuedTokens, create_door_app
from kestrel_mcp import create_kestrel_mcp_server
from kestrel_protocol.surface import ALL_SCOPES
from kestrel_sdk import create_sdk, local_transport, remote_transport
from kestrel_sdk.cli import cli
from kestrel_sdk.scenarios import scenario_from_file

from tests.exchange_hours import read_sessions, write_exchange_bars

pytestmark = pytest.mark.anyio

BASE = "http://127.0.0.1:8787"
TWIN = "tape-x5"


def _disguised_by_the_cli(tmp_path: Path) -> Path:
    labelled, served = tmp_path / "labelled", tmp_path / "served"
    scenario_from_file(write_exchange_bars(tmp_path / "ACME.csv"), "stock").write(
        labelled / "stock"
    )
    secret = tmp_path / "secret"
    secret.write_text(bytes(range(32)).hex(), encoding="utf-8")
    made = CliRunner().invoke(
        cli,
        [
            "--catalog-path",
            str(labelled),
            "scenario",
            "disguise",
            "stock",
            "--as",
            TWIN,
            "--secret-file",
            str(secret),
            "--out",
            str(served / TWIN),
        ],
    )
    assert made.exit_code == 0, made.output
    return served


def _times(text: str) -> list[str]:
    return [row["time"] for row in csv.DictReader(io.StringIO(text))]


async def test_no_face_serves_the_sources_clock_on_a_disguise(tmp_path: Path) -> None:
    served = _disguised_by_the_cli(tmp_path)
    owner: Any = local_transport(home=tmp_path / "home", catalog_paths=[served])
    runtime = owner.runtime
    store = DoorStore(tmp_path / "door.db")
    tokens = IssuedTokens(store)
    app = create_door_app(
        DoorConfig(base_url=BASE),
        transport_for=lambda p: local_transport(principal=p, runtime=runtime),
        grant_verifiers=[tokens],
        audit=AuditLog(store),
    )
    token = tokens.issue("alice", list(ALL_SCOPES))[1]
    auth = {"Authorization": f"Bearer {token}"}
    http = httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=BASE)
    stdio = create_kestrel_mcp_server(local_transport(runtime=runtime), secrets=False)
    read = {"jsonrpc": "2.0", "id": 1, "method": "resources/read"}
    read["params"] = {"uri": f"kestrel://catalog/scenarios/{TWIN}/tape"}
    try:
        door_mcp = (await http.post("/mcp", json=read, headers=auth)).json()
        stdio_mcp = await stdio.handle(read)
        assert stdio_mcp is not None
        faces = {
            "sdk": await create_sdk(owner).tape(TWIN),
            "remote sdk": await create_sdk(remote_transport(BASE, token, client=http)).tape(TWIN),
            "/v1": (await http.get(f"/v1/catalog/scenarios/{TWIN}/tape", headers=auth)).text,
            "stdio mcp": stdio_mcp["result"]["contents"][0]["text"],
            "door /mcp": door_mcp["result"]["contents"][0]["text"],
        }
    finally:
        await http.aclose()
        await owner.aclose()
    assert len(set(faces.values())) == 1
    for face, text in faces.items():
        sessions = read_sessions(_times(text))[1:-1]  # the tape's ends cut theirs
        assert len(sessions) == 250, face
        opens = Counter(s.opens.strftime("%H:%M") for s in sessions)
        closes = Counter(s.closes.strftime("%H:%M") for s in sessions)
        assert len(opens) == 1, (face, opens)  # summer time: no trace
        assert len(closes) == 1, (face, closes)  # a half day closes when a full day does
