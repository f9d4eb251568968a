"""stdio MCP -> remote_transport -> door -> runtime, each in its own process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from click.testing import CliRunner
from kestrel_door.cli import door_group

from tests.loopback import free_port, wait_for_http


def _rpc(proc: subprocess.Popen[str], message: dict[str, Any]) -> dict[str, Any] | None:
    assert proc.stdin is not None
    assert proc.stdout is not None
    proc.stdin.write(json.dumps(message) + "\n")
    proc.stdin.flush()
    if "id" not in message:
        return None
    line = proc.stdout.readline()
    assert line, "kestrel-mcp closed its stdout"
    answer: dict[str, Any] = json.loads(line)
    return answer


def test_kestrel_mcp_remote_through_the_door(tmp_path: Path) -> None:
    door_home = tmp_path / "door"
    issued = CliRunner().invoke(
        door_group,
        [
            *("--home", str(door_home), "token", "issue", "--principal", "remote-agent"),
            *("--scope", "kestrel:read kestrel:trade kestrel:grade"),
        ],
    )
    token = issued.output.strip().splitlines()[-1]
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    door = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "from kestrel_door.cli import main; main()",
            "serve",
            "--port",
            str(port),
        ],
        env={**os.environ, "KESTREL_HOME": str(door_home)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    mcp: subprocess.Popen[str] | None = None
    try:
        wait_for_http(base + "/.well-known/oauth-protected-resource", door)
        mcp = subprocess.Popen(
            [sys.executable, "-m", "kestrel_mcp", "--remote", base],
            env={
                **os.environ,
                "KESTREL_HOME": str(tmp_path / "client"),
                "KESTREL_API_TOKEN": token,
            },
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        init = _rpc(
            mcp,
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": {"name": "e2e", "version": "1"},
                },
            },
        )
        assert init is not None
        assert "result" in init
        _rpc(mcp, {"jsonrpc": "2.0", "method": "notifications/initialized"})

        def call(rid: int, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
            answer = _rpc(
                mcp,
                {
                    "jsonrpc": "2.0",
                    "id": rid,
                    "method": "tools/call",
                    "params": {"name": name, "arguments": arguments},
                },
            )
            assert answer is not None
            result: dict[str, Any] = answer["result"]
            return result

        opened = call(2, "kestrel_session_open", {"scenario": "acme-trend"})
        assert opened.get("isError") is not True, opened
        sid = opened["structuredContent"]["sessionId"]
        sent = call(
            3, "kestrel_session_submit", {"sessionId": sid, "source": "buy 10 ACME\nadvance 3\n"}
        )
        assert sent["structuredContent"]["pentad"]["seq"] == 1
        refused = call(4, "kestrel_session_frame", {"sessionId": "ks_nobody"})
        assert refused["isError"] is True
        assert refused["structuredContent"]["refusal"]["code"] == "UNKNOWN_SESSION"
    finally:
        if mcp is not None:
            assert mcp.stdin is not None
            mcp.stdin.close()
            mcp.wait(timeout=10)
        door.terminate()
        door.wait(timeout=10)
    # the door audited the remote agent's calls under its principal
    audit = CliRunner().invoke(door_group, ["--home", str(door_home), "audit", "--json"])
    rows = json.loads(audit.output)
    assert {r["principal"] for r in rows} == {"remote-agent"}
    assert [r["tool"] for r in rows][:2] == ["kestrel_session_open", "kestrel_session_submit"]
    assert token not in audit.output
