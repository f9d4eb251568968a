"""The MCP Inspector CLI (a real, independent MCP client in Node) against ``kestrel-mcp``.

Runs the Inspector that ``bash .ci/install-node.sh`` caches, with its Node 22 (see
tests/peers.py); without them the tests skip saying so, and fail under ``CI=true``.
HOME is the per-test temp dir (tests/conftest.py), so Kestrel's state and the Inspector's
own config never touch the operator's.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from kestrel_protocol.surface import SURFACE

from tests.peers import INSTALL_NODE, inspector_cli, node_22, require_peer

INSPECTOR_VERSION = os.environ.get("KESTREL_INSPECTOR_VERSION", "2.12.0")
SERVER = str(Path(sys.executable).with_name("kestrel-mcp"))


@pytest.fixture(scope="module")
def inspector() -> list[str]:
    """How to run the Inspector: the cached install, run by Node 22 directly."""
    node = require_peer(node_22(), what="Node >= 22", install=INSTALL_NODE)
    cli = require_peer(
        inspector_cli(INSPECTOR_VERSION),
        what=f"@modelcontextprotocol/inspector@{INSPECTOR_VERSION}",
        install=INSTALL_NODE,
    )
    return [node, cli]


@pytest.fixture(scope="module")
def npm_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An npm cache of the module's own, so the Inspector never writes to the operator's."""
    return tmp_path_factory.mktemp("npm-cache")


def inspect(inspector: list[str], npm_cache: Path, *args: str) -> dict[str, Any]:
    env = {**os.environ, "npm_config_cache": str(npm_cache), "KESTREL_SECRET_STORE": "file"}
    # the Inspector's own children use the same node
    env["PATH"] = str(Path(inspector[0]).parent) + os.pathsep + env.get("PATH", "")
    done = subprocess.run(
        [*inspector, "--cli", SERVER, *args, "--format", "json"],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        cwd=os.environ["HOME"],
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    start = done.stdout.index("{")
    result: dict[str, Any] = json.loads(done.stdout[start:])
    return result


def test_inspector_lists_every_tool(inspector: list[str], npm_cache: Path) -> None:
    listed = inspect(inspector, npm_cache, "--method", "tools/list")
    tools = listed.get("tools") or listed["result"]["tools"]
    names = [tool["name"] for tool in tools]
    assert names[:2] == ["kestrel_catalog", "kestrel_validate"]
    assert "kestrel_session_submit" in names
    registry = {tool.name for tool in SURFACE.listed}
    assert registry <= set(names)
    assert {n for n in names if n not in registry} == {
        "kestrel_secrets_list",
        "kestrel_secrets_set",
        "kestrel_secrets_unset",
    }
    assert len(names) == len(set(names))


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_inspector_calls_kestrel_validate(inspector: list[str], npm_cache: Path, era: str) -> None:
    source = "buy 10 ACME\nadvance 5\n"
    called = inspect(
        inspector,
        npm_cache,
        "--method",
        "tools/call",
        "--tool-name",
        "kestrel_validate",
        "--tool-args-json",
        json.dumps({"source": source, "scenario": "acme-trend"}),
        "--protocol-era",
        era,
    )
    result = called.get("result", called)
    report = result["structuredContent"]
    assert report == {"kind": "kestrel.validation", "ok": True, "statements": 2, "diagnostics": []}
    assert json.loads(result["content"][0]["text"]) == report
    refused = inspect(
        inspector,
        npm_cache,
        "--method",
        "tools/call",
        "--tool-name",
        "kestrel_validate",
        "--tool-args-json",
        json.dumps({"source": "bogus"}),
        "--protocol-era",
        era,
    )
    diagnostics = refused.get("result", refused)["structuredContent"]["diagnostics"]
    assert diagnostics[0]["code"] == "K100"
