"""The MCP Inspector CLI (a real, independent MCP client in Node) against ``kestrel-mcp``.

Runs the Inspector that ``.ci/install-node.sh`` caches (``KESTREL_INSPECTOR``, or found in
``$KESTREL_NODE_CACHE``, default ``~/.cache/kestrel-node``) with its Node 22, else
``npx -y @modelcontextprotocol/inspector``; skipped, saying so, only when node/npx is absent.
HOME is the per-test temp dir (tests/conftest.py), so Kestrel's state and the Inspector's
own config never touch the operator's.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

INSPECTOR_VERSION = os.environ.get("KESTREL_INSPECTOR_VERSION", "2.12.0")
SERVER = str(Path(sys.executable).with_name("kestrel-mcp"))


CACHE = Path(os.environ.get("KESTREL_NODE_CACHE") or Path.home() / ".cache" / "kestrel-node")


def node_binary() -> str | None:
    """Node from the install-node.sh cache (Node 22), else the one on PATH."""
    cached = CACHE / "node" / "bin" / "node"
    return str(cached) if cached.exists() else shutil.which("node")


def inspector_command() -> list[str] | None:
    """How to run the Inspector: the cached install (run by node directly), else npx."""
    node = node_binary()
    if node is None:
        return None
    explicit = os.environ.get("KESTREL_INSPECTOR")
    candidates = [Path(explicit)] if explicit else []
    candidates.append(
        CACHE / f"inspector-{INSPECTOR_VERSION}" / "node_modules" / ".bin" / "mcp-inspector"
    )
    for candidate in candidates:
        if candidate.exists():
            return [node, str(candidate.resolve())]
    npx = shutil.which("npx")
    if npx:
        return [npx, "-y", f"@modelcontextprotocol/inspector@{INSPECTOR_VERSION}"]
    return None


COMMAND = inspector_command()
pytestmark = pytest.mark.skipif(
    COMMAND is None, reason="node/npx is absent (run .ci/install-node.sh to install them)"
)


@pytest.fixture(scope="module")
def npm_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One npm cache for the module, so npx downloads the Inspector at most once."""
    return tmp_path_factory.mktemp("npm-cache")


def inspect(npm_cache: Path, *args: str) -> dict[str, Any]:
    assert COMMAND is not None
    env = {**os.environ, "npm_config_cache": str(npm_cache), "KESTREL_SECRET_STORE": "file"}
    node = node_binary()
    if node is not None:  # npx and the Inspector's own children use the same node
        env["PATH"] = str(Path(node).parent) + os.pathsep + env.get("PATH", "")
    done = subprocess.run(
        [*COMMAND, "--cli", SERVER, *args, "--format", "json"],
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


def test_inspector_lists_every_tool(npm_cache: Path) -> None:
    listed = inspect(npm_cache, "--method", "tools/list")
    tools = listed.get("tools") or listed["result"]["tools"]
    names = [tool["name"] for tool in tools]
    assert names[:2] == ["kestrel_catalog", "kestrel_validate"]
    assert "kestrel_session_submit" in names
    assert len(names) == 13


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_inspector_calls_kestrel_validate(npm_cache: Path, era: str) -> None:
    source = "buy 10 ACME\nadvance 5\n"
    called = inspect(
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
