"""Per-session bounds on every face: a submission that would leave more orders open than
the bound (the runtime's, lowered by a scenario's ``max_open_orders``) is refused
``LIMIT_EXCEEDED`` naming the limit, and nothing is stored."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import httpx
import kestrel_sdk
import pytest
from click.testing import CliRunner
from kestrel_protocol import KestrelError
from kestrel_sdk.cli import cli as kestrel_cli

from tests.loopback import free_port
from tests.reliability.support import McpStdio, issue_token, kill, start_door

pytestmark = pytest.mark.anyio

SHIPPED = Path(kestrel_sdk.__file__).parent / "catalog_data" / "acme-trend"
REST = "buy 1 ACME limit 1.00 tif gtc\n"  # far below the market: it stays open
THREE = REST * 3


def _bounded(parent: Path, bound: int = 2) -> Path:
    """A copy of acme-trend as ``bounded``, whose scenario.toml sets ``max_open_orders``."""
    directory = parent / "bounded"
    shutil.copytree(SHIPPED, directory)
    toml = (directory / "scenario.toml").read_text("utf-8")
    toml = toml.replace('id = "acme-trend"', 'id = "bounded"')
    toml = toml.replace(
        "bars_per_year = 252\n", f"bars_per_year = 252\nmax_open_orders = {bound}\n"
    )
    (directory / "scenario.toml").write_text(toml, "utf-8")
    return parent


def _limit(refusal: dict[str, Any], bound: int, found: int) -> None:
    assert refusal["code"] == "LIMIT_EXCEEDED", refusal
    assert refusal["detail"] == {"limit": "openOrders", "max": bound, "found": found}
    assert f"at most {bound} (openOrders)" in refusal["message"]


async def test_sdk_refuses_the_order_past_the_bound_and_stores_nothing(tmp_path: Path) -> None:
    catalog = _bounded(tmp_path / "catalog")
    sdk = kestrel_sdk.create_sdk(
        kestrel_sdk.local_transport(home=tmp_path / "home", catalog_paths=[catalog])
    )
    session = (await sdk.open_session("bounded", "b")).session
    assert session is not None
    await session.submit(REST * 2)  # at the bound: accepted
    with pytest.raises(KestrelError) as refused:
        await session.submit(REST)
    _limit(refused.value.refusal.to_json(), 2, 3)
    frame = (await session.frame()).frame
    assert frame.seq == 1  # nothing stored
    assert len(frame.orders) == 2
    # cancelling first makes room in the same submission; cancel all is never refused
    assert (await session.submit(f"cancel o1\n{REST}")).pentad.seq == 2
    assert (await session.submit("cancel all\n")).pentad.seq == 3
    await sdk.aclose()
    # the runtime's own bound, on a shipped scenario (the scenario's may only lower it)
    runtime = kestrel_sdk.create_sdk(
        kestrel_sdk.local_transport(
            home=tmp_path / "home2", catalog_paths=[catalog], max_open_orders=1
        )
    )
    for scenario, bound in (("acme-trend", 1), ("bounded", 1)):
        opened = (await runtime.open_session(scenario, "r")).session
        assert opened is not None
        with pytest.raises(KestrelError) as refused:
            await opened.submit(REST * 2)
        _limit(refused.value.refusal.to_json(), bound, 2)
    await runtime.aclose()


def test_cli_run_refuses_with_the_limit_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KESTREL_CATALOG_PATH", str(_bounded(tmp_path / "catalog")))
    program = tmp_path / "three.kes"
    program.write_text(THREE, "utf-8")
    ran = CliRunner().invoke(
        kestrel_cli, ["run", str(program), "--scenario", "bounded", "--atomic", "--quiet"]
    )
    assert ran.exit_code != 0
    assert "LIMIT_EXCEEDED" in ran.stderr
    assert "at most 2 (openOrders)" in ran.stderr


def test_stdio_mcp_refuses_with_the_limit_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KESTREL_CATALOG_PATH", str(_bounded(tmp_path / "catalog")))
    home = tmp_path / "home"
    home.mkdir()
    mcp = McpStdio(home, tmp_path / "mcp.log")
    try:
        mcp.initialize()
        opened = mcp.call("kestrel_session_open", scenario="bounded", label="m")
        sid = opened["structuredContent"]["sessionId"]
        refused = mcp.call("kestrel_session_submit", sessionId=sid, source=THREE)
        assert refused["isError"] is True
        _limit(refused["structuredContent"]["refusal"], 2, 3)
        frame = mcp.call("kestrel_session_frame", sessionId=sid)["structuredContent"]
        assert frame["frame"]["seq"] == 0
    finally:
        mcp.close()


def test_door_v1_and_mcp_refuse_past_the_doors_bound(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    token = issue_token(home, "alice")
    door = start_door(home, free_port(), "--max-open-orders", "2")
    auth = {"Authorization": f"Bearer {token}"}
    try:
        base = door.base
        sid = httpx.post(
            f"{base}/v1/sessions", json={"scenario": "acme-trend"}, headers=auth, timeout=60
        ).json()["sessionId"]
        v1 = httpx.post(
            f"{base}/v1/sessions/{sid}/submit", json={"source": THREE}, headers=auth, timeout=60
        )
        assert v1.status_code == 422
        _limit(v1.json()["refusal"], 2, 3)
        call = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {
                "name": "kestrel_session_submit",
                "arguments": {"sessionId": sid, "source": THREE},
            },
        }
        mcp = httpx.post(
            f"{base}/mcp",
            content=json.dumps(call),
            headers={
                **auth,
                "Content-Type": "application/json",
                "Accept": "application/json, text/event-stream",
            },
            timeout=60,
        ).json()
        assert mcp["result"]["isError"] is True
        _limit(mcp["result"]["structuredContent"]["refusal"], 2, 3)
        frame = httpx.get(f"{base}/v1/sessions/{sid}/frame", headers=auth, timeout=60).json()
        assert frame["frame"]["seq"] == 0  # nothing stored by either refusal
    finally:
        kill(door.proc)


async def test_a_bracket_counts_its_held_children_against_the_bound(tmp_path: Path) -> None:
    catalog = _bounded(tmp_path / "catalog")
    sdk = kestrel_sdk.create_sdk(
        kestrel_sdk.local_transport(home=tmp_path / "home", catalog_paths=[catalog])
    )
    session = (await sdk.open_session("bounded", "b")).session
    assert session is not None
    with pytest.raises(KestrelError) as refused:  # an entry and two children: 3 > 2
        await session.submit("buy 1 ACME limit 1.00 take 2.00 loss 0.50 tif gtc\n")
    _limit(refused.value.refusal.to_json(), 2, 3)
    await session.submit("buy 1 ACME limit 1.00 take 2.00 tif gtc\n")  # 2: at the bound
    frame = (await session.frame()).frame
    assert [(o.id, o.status, o.parent) for o in frame.orders] == [
        ("o1", "new", None),
        ("o2", "held", "o1"),
    ]
