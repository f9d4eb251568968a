"""``no-lookahead`` over the official ``mcp`` client and the real ``kestrel-mcp`` (stdio).

Open, read the tape, trade, grade: the check fails naming the read, whether it came
right after the open (before submission 1) or later. A scout session of the same
principal that ran ahead on the (unsealed) scenario fails the session traded behind it,
naming the scout. A principal that saw nothing ahead passes. On a sealed scenario
(``sealed = true`` in its ``scenario.toml``) the tape read is refused and the grade
passes, saying the scenario was sealed throughout; a session on the public scenario of
the same bars is then behind it.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters

pytestmark = pytest.mark.anyio

SHIPPED = Path(__file__).parents[2] / "packages/kestrel-sdk/src/kestrel_sdk/catalog_data"


def _sealed_catalog(root: Path) -> Path:
    """A user catalog holding ``acme-sealed``: acme-chop's tape and terms, sealed (a
    tape of its own to the horizon: one lineage with acme-chop, its bars)."""
    directory = root / "acme-sealed"
    directory.mkdir(parents=True)
    shutil.copy(SHIPPED / "acme-chop" / "tape.csv", directory / "tape.csv")
    toml = (SHIPPED / "acme-chop" / "scenario.toml").read_text("utf-8")
    toml = toml.replace('id = "acme-chop"', 'id = "acme-sealed"')
    (directory / "scenario.toml").write_text("sealed = true\n" + toml, "utf-8")
    return root


def _params(home: Path, catalog: Path) -> StdioServerParameters:
    env = {
        **os.environ,
        "KESTREL_HOME": str(home),
        "KESTREL_SECRET_STORE": "file",
        "KESTREL_CATALOG_PATH": str(catalog),
    }
    return StdioServerParameters(
        command=sys.executable, args=["-m", "kestrel_mcp", "--home", str(home)], env=env
    )


async def _open(client: Client, scenario: str) -> str:
    opened = await client.call_tool("kestrel_session_open", {"scenario": scenario})
    assert opened.structured_content is not None
    return str(opened.structured_content["sessionId"])


async def _session(
    client: Client, scenario: str, *, read_tape: bool, read_first: bool = False
) -> tuple[Any, str]:
    """Open, (read the tape,) trade and grade; the no-lookahead check and the read's
    outcome (the first line of the CSV or the refusal). ``read_first``: the tape is
    read right after the open, else after the first submission."""
    sid = await _open(client, scenario)
    outcome = "not read"
    if read_tape and read_first:
        read = await client.read_resource(f"kestrel://catalog/scenarios/{scenario}/tape")
        outcome = read.contents[0].text.splitlines()[0]  # type: ignore[union-attr]
    await client.call_tool("kestrel_session_submit", {"sessionId": sid, "source": "advance 3"})
    if read_tape and not read_first:
        try:
            read = await client.read_resource(f"kestrel://catalog/scenarios/{scenario}/tape")
            outcome = read.contents[0].text.splitlines()[0]  # type: ignore[union-attr]
        except Exception as exc:
            outcome = str(exc)
    await client.call_tool(
        "kestrel_session_submit", {"sessionId": sid, "source": "buy 10 ACME\nadvance 2"}
    )
    return await _check(client, sid), outcome


async def _check(client: Client, sid: str) -> Any:
    """The session's grade's no-lookahead check."""
    graded: Any = (await client.call_tool("kestrel_grade", {"sessionId": sid})).structured_content
    for _ in range(50):
        if graded["kind"] != "kestrel.operation":
            break
        resumed = await client.call_tool("kestrel_operation_resume", {"token": graded["token"]})
        graded = resumed.structured_content
    assert graded["kind"] == "kestrel.grade"
    return next(c for c in graded["conformance"]["checks"] if c["id"] == "no-lookahead")


async def test_no_lookahead_over_the_official_client(tmp_path: Path) -> None:
    catalog = _sealed_catalog(tmp_path / "catalog")
    async with Client(_params(tmp_path / "home", catalog), read_timeout_seconds=60) as client:
        assert client.instructions is not None
        assert "no-lookahead" in client.instructions

        check, outcome = await _session(client, "acme-trend", read_tape=False)
        assert check["passed"] is True
        assert "read no bar after the clock" in check["detail"]

        check, outcome = await _session(client, "acme-crash", read_tape=True)
        assert outcome == "time,symbol,open,high,low,close,volume"
        assert check["passed"] is False
        assert check["detail"].startswith("tape acme-crash read before submission 2 at bar 3")

        # the principal has now seen acme-trend to bar 5: a new session there is behind
        check, outcome = await _session(client, "acme-trend", read_tape=False)
        assert check["passed"] is False
        assert "of the same principal had reached bar 5 before submission 1" in check["detail"]

        check, outcome = await _session(client, "acme-sealed", read_tape=True)
        assert "SCENARIO_SEALED" in outcome
        assert "sealed for the whole session" in check["detail"]
        assert check["passed"] is True

        # acme-chop is acme-sealed's bars: the principal has seen them to bar 5
        check, outcome = await _session(client, "acme-chop", read_tape=False)
        assert check["passed"] is False
        behind = "on acme-sealed of the same principal had reached bar 5 before submission 1"
        assert behind in check["detail"]


async def test_a_read_right_after_the_open_is_counted(tmp_path: Path) -> None:
    """Opened and graded, then a second session: open, read the tape, submit, grade."""
    catalog = _sealed_catalog(tmp_path / "catalog")
    async with Client(_params(tmp_path / "home", catalog), read_timeout_seconds=60) as client:
        first = await _open(client, "pairs-kx")
        assert (await _check(client, first))["passed"] is True
        check, outcome = await _session(client, "pairs-kx", read_tape=True, read_first=True)
        assert outcome == "time,symbol,open,high,low,close,volume"
        assert check["passed"] is False
        assert check["detail"].startswith("tape pairs-kx read before submission 1 at bar 0")


async def test_a_scout_session_fails_the_session_traded_behind_it(tmp_path: Path) -> None:
    """One principal, an unsealed scenario: the scout runs to the tape's end, then the
    trading session submits at bar 0 and fails, naming the scout; a later submission of
    the scout itself (at its own clock) does not fail the scout."""
    catalog = _sealed_catalog(tmp_path / "catalog")
    async with Client(_params(tmp_path / "home", catalog), read_timeout_seconds=60) as client:
        trader = await _open(client, "acme-crash")  # not acme-chop: acme-sealed's twin
        scout = await _open(client, "acme-crash")
        await client.call_tool(
            "kestrel_session_submit", {"sessionId": scout, "source": "advance 2519"}
        )
        await client.call_tool(
            "kestrel_session_submit", {"sessionId": trader, "source": "buy 10 ACME\nadvance 1"}
        )
        check = await _check(client, trader)
        assert check["passed"] is False
        assert check["detail"].startswith(
            f"session {scout} of the same principal had reached bar 2519 before submission 1"
            " at bar 0"
        )
        assert (await _check(client, scout))["passed"] is True
