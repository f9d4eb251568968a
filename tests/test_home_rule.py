"""One home rule: what Kestrel writes goes to the home the caller chose, on every face.

``HOME`` is a fresh directory and ``KESTREL_HOME`` is unset, so ``~/.kestrel`` would be
a directory inside it; each face is given another home (``--home``, ``home=``). A user
scenario on the catalog path is listed, and so validated and its shape remembered
(``kestrel_sdk.runtime.catalog.shapes``): nothing appears under ``HOME``, and the shape
is in the chosen home's ``catalog-shapes``.

Was: the shapes went to ``~/.kestrel/catalog-shapes`` whatever home a face was given
(the CLI's ``--home``, the SDK's ``home=``, kestrel-mcp's ``--home``, the door's).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import anyio
import httpx
import pytest
from click.testing import CliRunner
from kestrel_sdk import create_sdk, local_transport
from kestrel_sdk.cli import cli
from mcp import Client, StdioServerParameters

from tests.doors import issue_token
from tests.loopback import free_port, wait_for_http
from tests.user_scenario import write_user_scenario

BARS = """Date,Open,High,Low,Close,Adj Close,Volume
2024-01-02,187.149994,188.440002,183.889999,185.639999,184.938217,82488700
2024-01-03,184.220001,185.880005,183.429993,184.250000,183.553467,58414500
2024-01-04,182.149994,183.089996,180.880005,181.910004,181.222336,71983600
"""


@pytest.fixture
def user_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A fresh ``HOME`` (``~``), ``KESTREL_HOME`` unset; afterwards nothing is in it."""
    home = tmp_path / "user"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("KESTREL_HOME", raising=False)
    yield home
    assert sorted(str(p.relative_to(home)) for p in home.rglob("*")) == []


@pytest.fixture
def catalog(tmp_path: Path) -> Path:
    """A catalog directory holding the user scenario ``mine`` (never listed before)."""
    return write_user_scenario(tmp_path / "catalog", "mine").parent


def _remembered(home: Path) -> list[str]:
    shapes = home / "catalog-shapes"
    return sorted(p.name for p in shapes.iterdir()) if shapes.is_dir() else []


def _env(user_home: Path, catalog: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "KESTREL_HOME"}
    return {**env, "HOME": str(user_home), "KESTREL_CATALOG_PATH": str(catalog)}


def test_the_cli_writes_under_home_only(user_home: Path, tmp_path: Path) -> None:
    chosen, catalog = tmp_path / "chosen", tmp_path / "made"
    catalog.mkdir()
    bars = tmp_path / "bars.csv"
    bars.write_text(BARS)
    program = tmp_path / "hold.kes"
    program.write_text("buy 10 BARS\nadvance 2\n")

    def kestrel(*args: str) -> str:
        where = ["--home", str(chosen), "--catalog-path", str(catalog)]
        done = CliRunner().invoke(cli, [*where, *args])
        assert done.exit_code == 0, done.output
        return done.stdout

    kestrel("scenario", "new", "made", "--from", str(bars), "--out", str(catalog / "made"))
    assert len(_remembered(chosen)) == 1  # kept as it was written
    (chosen / "catalog-shapes").rename(tmp_path / "set-aside")
    kestrel("catalog", "--check")
    assert len(_remembered(chosen)) == 1  # checked again, remembered in --home
    session = json.loads(kestrel("run", str(program), "--scenario", "made", "--json"))["session"]
    proof = tmp_path / "proofs" / "a" / "made.json"
    proof.parent.mkdir(parents=True)
    kestrel("proof", session, "-o", str(proof))
    kestrel("verify", str(proof))
    kestrel("board", str(proof.parent.parent), "--json", "-o", str(tmp_path / "board.html"))


def test_the_sdk_writes_under_home_only(user_home: Path, catalog: Path, tmp_path: Path) -> None:
    chosen = tmp_path / "chosen"

    async def listed() -> list[str]:
        async with create_sdk(local_transport(home=chosen, catalog_paths=[catalog])) as sdk:
            return [s.id for s in (await sdk.catalog()).scenarios]

    assert "mine" in anyio.run(listed)
    assert len(_remembered(chosen)) == 1


@pytest.mark.anyio
async def test_kestrel_mcp_writes_under_home_only(
    user_home: Path, catalog: Path, tmp_path: Path
) -> None:
    chosen = tmp_path / "chosen"
    server = StdioServerParameters(
        command=sys.executable,
        args=["-m", "kestrel_mcp", "--home", str(chosen)],
        env=_env(user_home, catalog),
    )
    async with Client(server, read_timeout_seconds=60) as client:
        result = await client.call_tool("kestrel_catalog", {})
    assert "mine" in [s["id"] for s in result.structured_content["scenarios"]]
    assert len(_remembered(chosen)) == 1


def test_the_door_writes_under_home_only(user_home: Path, catalog: Path, tmp_path: Path) -> None:
    chosen = tmp_path / "chosen"
    token = issue_token(chosen, "agent")
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    door = subprocess.Popen(
        [
            *(sys.executable, "-c", "from kestrel_door.cli import main; main()"),
            *("--home", str(chosen), "serve", "--port", str(port)),
        ],
        env=_env(user_home, catalog),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        wait_for_http(url + "/.well-known/oauth-protected-resource", door)
        auth = {"Authorization": f"Bearer {token}"}
        listed = httpx.get(f"{url}/v1/catalog", headers=auth, timeout=30)
    finally:
        door.terminate()
        door.wait(timeout=10)
    assert listed.status_code == 200, listed.text
    assert "mine" in [s["id"] for s in listed.json()["scenarios"]]
    assert len(_remembered(chosen)) == 1
