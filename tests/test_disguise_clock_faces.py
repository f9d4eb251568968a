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

import pytest
from click.testing import CliRunner
from kestrel_sdk.cli import cli
from kestrel_sdk.scenarios import scenario_from_file

from tests.every_face import Faces
from tests.exchange_hours import read_sessions, write_exchange_bars

pytestmark = pytest.mark.anyio

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
    every = Faces(tmp_path, [_disguised_by_the_cli(tmp_path)], attested=False)
    read = {"uri": f"kestrel://catalog/scenarios/{TWIN}/tape"}
    try:
        door_mcp = (await every.mcp("resources/read", read, stdio_too=False)).json()
        stdio_mcp = await every.stdio.handle(
            {"jsonrpc": "2.0", "id": 1, "method": "resources/read", "params": read}
        )
        assert stdio_mcp is not None
        faces = {
            "sdk": await every.alice.tape(TWIN),
            "remote sdk": await every.remote.tape(TWIN),
            "/v1": (
                await every.http.get(f"/v1/catalog/scenarios/{TWIN}/tape", headers=every.auth)
            ).text,
            "stdio mcp": stdio_mcp["result"]["contents"][0]["text"],
            "door /mcp": door_mcp["result"]["contents"][0]["text"],
        }
    finally:
        await every.aclose()
    assert len(set(faces.values())) == 1
    for face, text in faces.items():
        sessions = read_sessions(_times(text))[1:-1]  # the tape's ends cut theirs
        assert len(sessions) == 250, face
        opens = Counter(s.opens.strftime("%H:%M") for s in sessions)
        closes = Counter(s.closes.strftime("%H:%M") for s in sessions)
        assert len(opens) == 1, (face, opens)  # summer time: no trace
        assert len(closes) == 1, (face, closes)  # a half day closes when a full day does
