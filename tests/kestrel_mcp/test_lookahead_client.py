"""``no-lookahead`` over the official ``mcp`` client and the real ``kestrel-mcp`` (stdio).

Open, read the tape, trade, grade: the check fails naming the read. The same without
the read passes. On a sealed scenario (``sealed = true`` in its ``scenario.toml``) the
tape read is refused and the grade passes, saying the scenario was sealed throughout.
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
    """A user catalog holding ``acme-sealed``: acme-trend's tape and terms, sealed."""
    directory = root / "acme-sealed"
    directory.mkdir(parents=True)
    shutil.copy(SHIPPED / "acme-trend" / "tape.csv", directory / "tape.csv")
    toml = (SHIPPED / "acme-trend" / "scenario.toml").read_text("utf-8")
    toml = toml.replace('id = "acme-trend"', 'id = "acme-sealed"')
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


async def _session(client: Client, scenario: str, *, read_tape: bool) -> tuple[Any, str]:
    """Open, (read the tape,) trade and grade; the no-lookahead check and the read's
    outcome (the first line of the CSV or the refusal)."""
    opened = await client.call_tool("kestrel_session_open", {"scenario": scenario})
    assert opened.structured_content is not None
    sid = opened.structured_content["sessionId"]
    await client.call_tool("kestrel_session_submit", {"sessionId": sid, "source": "advance 3"})
    outcome = "not read"
    if read_tape:
        try:
            read = await client.read_resource(f"kestrel://catalog/scenarios/{scenario}/tape")
            outcome = read.contents[0].text.splitlines()[0]  # type: ignore[union-attr]
        except Exception as exc:
            outcome = str(exc)
    await client.call_tool(
        "kestrel_session_submit", {"sessionId": sid, "source": "buy 10 ACME\nadvance 2"}
    )
    graded: Any = (await client.call_tool("kestrel_grade", {"sessionId": sid})).structured_content
    for _ in range(50):
        if graded["kind"] != "kestrel.operation":
            break
        resumed = await client.call_tool("kestrel_operation_resume", {"token": graded["token"]})
        graded = resumed.structured_content
    assert graded["kind"] == "kestrel.grade"
    check = next(c for c in graded["conformance"]["checks"] if c["id"] == "no-lookahead")
    return check, outcome


async def test_no_lookahead_over_the_official_client(tmp_path: Path) -> None:
    catalog = _sealed_catalog(tmp_path / "catalog")
    async with Client(_params(tmp_path / "home", catalog), read_timeout_seconds=60) as client:
        assert client.instructions is not None
        assert "no-lookahead" in client.instructions

        check, outcome = await _session(client, "acme-trend", read_tape=True)
        assert outcome == "time,symbol,open,high,low,close,volume"
        assert check["passed"] is False
        assert "read tape acme-trend after submission 1 (clock bar 3)" in check["detail"]

        check, outcome = await _session(client, "acme-trend", read_tape=False)
        assert check["passed"] is True
        assert "read no bar after the clock" in check["detail"]

        check, outcome = await _session(client, "acme-sealed", read_tape=True)
        assert "SCENARIO_SEALED" in outcome
        assert "sealed for the whole session" in check["detail"]
        assert check["passed"] is True
