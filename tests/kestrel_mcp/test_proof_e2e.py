"""A proof travels: made through ``kestrel-mcp`` on one home, verified by ``kestrel verify``
in another process whose ``HOME`` and ``KESTREL_HOME`` are new empty directories.

Every step is a real process: the MCP server over stdio (the raw line client of
``test_stdio``), ``kestrel proof`` and ``kestrel verify``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.kestrel_mcp.test_stdio import INIT, Peer

pytestmark = pytest.mark.anyio

BIN = Path(sys.executable).parent
SOURCES = ("buy 10 ACME\nadvance 30\n", "sell 10 ACME\nbuy 20 ACME limit 41\nadvance 40\n")


def _env(home: Path, user_home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("KESTREL_CATALOG_PATH",)}
    env.update(HOME=str(user_home), KESTREL_HOME=str(home), **extra)
    return env


def _kestrel(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BIN / "kestrel"), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )


def _empty(tmp_path: Path, name: str) -> Path:
    path = tmp_path / name
    path.mkdir()
    return path


async def _call(peer: Peer, rid: int, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    params = {"name": name, "arguments": arguments}
    await peer.send({"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params})
    reply = await peer.receive(timeout=60)
    assert reply["id"] == rid
    result: dict[str, Any] = reply["result"]
    assert not result.get("isError"), result
    content: dict[str, Any] = result["structuredContent"]
    return content


async def _mcp_session(home: Path, env: dict[str, str]) -> str:
    """Open, trade and close a session on acme-trend through ``kestrel-mcp``; its id."""
    process = await anyio.open_process([str(BIN / "kestrel-mcp"), "--home", str(home)], env=env)
    peer = Peer(process)
    try:
        await peer.send(INIT)
        assert "result" in await peer.receive(timeout=60)
        await peer.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        opened = await _call(peer, 1, "kestrel_session_open", {"scenario": "acme-trend"})
        session_id: str = opened["sessionId"]
        for rid, source in enumerate(SOURCES, start=2):
            arguments = {"sessionId": session_id, "source": source}
            await _call(peer, rid, "kestrel_session_submit", arguments)
        await _call(peer, 9, "kestrel_session_close", {"sessionId": session_id})
        return session_id
    finally:
        if process.returncode is None:
            process.kill()
        await process.aclose()


async def test_an_mcp_sessions_proof_verifies_in_an_empty_home_and_a_changed_price_fails(
    tmp_path: Path,
) -> None:
    home = _empty(tmp_path, "kestrel-home")
    env = _env(home, _empty(tmp_path, "user-home"))
    session_id = await _mcp_session(home, env)
    proof_file = tmp_path / "proof.json"
    made = _kestrel(env, "proof", session_id, "-o", str(proof_file))
    assert made.returncode == 0, made.stderr
    proof = json.loads(proof_file.read_bytes())
    assert proof["kind"] == "kestrel.proof"
    assert proof["record"]["session"] == session_id
    assert len(proof["pentads"]) == 2
    assert "embedded" not in proof  # a shipped scenario needs no tape

    elsewhere, other_user = _empty(tmp_path, "empty-home"), _empty(tmp_path, "empty-user")
    clean = _env(elsewhere, other_user)
    verified = _kestrel(clean, "verify", str(proof_file))
    assert verified.returncode == 0, verified.stderr
    assert verified.stdout.strip().splitlines() == [
        f"ok: proof {proof['root']} of grade {proof['grade']['root']} verified by replay",
        f"provenance: catalog: scenario acme-trend {proof['scenario']['root']} from this "
        "machine's catalog",
    ]
    assert list(elsewhere.iterdir()) == []  # nothing was read from or written to it
    assert list(other_user.iterdir()) == []

    fill = proof["blotter"]["fills"][1]
    price: str = fill["price"]
    last = price[-1]
    changed = price[:-1] + ("1" if last != "1" else "2")
    fill["price"] = changed
    tampered = tmp_path / "tampered.json"
    tampered.write_text(json.dumps(proof), encoding="utf-8")
    failed = _kestrel(clean, "verify", str(tampered))
    assert failed.returncode == 1
    assert failed.stderr.strip() == (
        f"kestrel: CHECK_FAILED: verification failed: blotter.fills[{fill['id']}].price:"
        f" expected {price}, found {changed}"
    )
    as_json = _kestrel(clean, "verify", str(tampered), "--json")
    mismatch = json.loads(as_json.stdout)["mismatch"]
    assert mismatch == {
        "field": f"blotter.fills[{fill['id']}].price",
        "expected": price,
        "found": changed,
    }


def _user_scenario(root: Path) -> None:
    folder = root / "my-tape"
    folder.mkdir(parents=True)
    (folder / "scenario.toml").write_text(
        'id = "my-tape"\ntitle = "My tape"\ntape = "tape.csv"\ninterval = "1d"\n'
        'bars_per_year = 252\n[account]\ncash = "5000"\nshortable = false\n'
        'max_position = 1000\nmax_drawdown = "1.0"\n[fees]\nbps = "5"\nminimum = "1.00"\n'
        '[fill]\nparticipation = "1"\nslippage_bps = "0"\n'
        '[[instruments]]\nsymbol = "ZED"\ntick = "0.05"\nlot = 1\n',
        encoding="utf-8",
    )
    rows = ["time,symbol,open,high,low,close,volume"]
    for day in range(1, 29):
        base = 20 + (day % 7) * 0.5
        rows.append(
            f"2024-02-{day:02d}T00:00:00Z,ZED,{base:.2f},{base + 1:.2f},{base - 1:.2f},"
            f"{base + 0.5:.2f},10000"
        )
    (folder / "tape.csv").write_text("\n".join(rows) + "\n", encoding="utf-8")


def test_a_user_scenarios_proof_needs_its_tape_embedded(tmp_path: Path) -> None:
    catalog = tmp_path / "catalog"
    _user_scenario(catalog)
    home = _empty(tmp_path, "kestrel-home")
    env = _env(home, _empty(tmp_path, "user-home"), KESTREL_CATALOG_PATH=str(catalog))
    program = tmp_path / "zed.kes"
    program.write_text("buy 100 ZED\nadvance 10\nsell 100 ZED\nadvance 3\n", encoding="utf-8")
    embedded_file, plain_file = tmp_path / "embedded.json", tmp_path / "plain.json"
    ran = _kestrel(
        env, "run", str(program), "--scenario", "my-tape", "--quiet", "--out", str(embedded_file),
        "--embed-tape",
    )  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    embedded = json.loads(embedded_file.read_bytes())
    session_id = embedded["record"]["session"]
    plain = _kestrel(env, "proof", session_id, "-o", str(plain_file))
    assert plain.returncode == 0, plain.stderr
    scenario = json.loads(plain_file.read_bytes())["scenario"]
    assert embedded["embedded"]["scenario"]["root"] == scenario["root"]

    clean = _env(_empty(tmp_path, "empty-home"), _empty(tmp_path, "empty-user"))
    verified = _kestrel(clean, "verify", str(embedded_file))
    assert verified.returncode == 0, verified.stderr
    assert verified.stdout.startswith(f"ok: proof {embedded['root']} ")

    refused = _kestrel(clean, "verify", str(plain_file))
    assert refused.returncode == 3
    message = refused.stderr.strip()
    assert message.startswith("kestrel: UNKNOWN_SCENARIO: cannot verify the proof:")
    assert f"my-tape ({scenario['root']})" in message
    assert "--embed-tape" in message
