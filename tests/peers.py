"""Peers the tests use but the project cannot install itself (they need root, a system
package manager or Node): where they are, and the one rule for when they are missing.

A missing peer skips its test with a one-line reason naming the command that installs it;
under ``CI=true`` the same miss fails the test, so CI proves every peer-backed test ran.

Node 22 and the npm peers (MCP Inspector, MCP conformance suite) live in the cache that
``.ci/install-node.sh`` fills: ``$KESTREL_NODE_CACHE``, default ``~/.cache/kestrel-node``.
Read once at import, before tests/conftest.py points HOME at a home of the suite's own.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import TypeVar

import pytest

__all__ = [
    "INSTALL_NODE",
    "INSTALL_SERVICES",
    "chromium",
    "conformance_cli",
    "in_ci",
    "inspector_cli",
    "node_22",
    "node_cache",
    "require_peer",
]

INSTALL_NODE = "bash .ci/install-node.sh"
INSTALL_SERVICES = "bash .ci/services"
NODE_MAJOR = 22

T = TypeVar("T")


def in_ci() -> bool:
    """True when the environment says this is CI (``CI=true``, as CI services set it)."""
    return os.environ.get("CI", "").strip().lower() in {"1", "true", "yes"}


def require_peer(found: T | None, *, what: str, install: str) -> T:
    """``found`` if the peer is there; else skip (fail under ``CI=true``) naming ``install``."""
    if found is not None:
        return found
    reason = f"{what} is not installed (install it with `{install}`)"
    if in_ci():
        pytest.fail(f"CI=true, and {reason}", pytrace=False)
    pytest.skip(reason)


_CACHE = Path(os.environ.get("KESTREL_NODE_CACHE") or Path.home() / ".cache" / "kestrel-node")


def node_cache() -> Path:
    """The directory ``.ci/install-node.sh`` installs Node and the npm peers into."""
    return _CACHE


def _major(node: str) -> int:
    try:
        done = subprocess.run(
            [node, "--version"], capture_output=True, text=True, timeout=30, check=False
        )
    except OSError:
        return 0
    digits = done.stdout.strip().lstrip("v").split(".")[0]
    return int(digits) if digits.isdigit() else 0


def node_22() -> str | None:
    """Node >= 22: the cached one, else the one on PATH if it is new enough."""
    for candidate in (str(_CACHE / "node" / "bin" / "node"), shutil.which("node")):
        if candidate and Path(candidate).exists() and _major(candidate) >= NODE_MAJOR:
            return candidate
    return None


def _npm_bin(package_dir: Path, command: str) -> str | None:
    path = package_dir / "node_modules" / ".bin" / command
    return str(path.resolve()) if path.exists() else None


def inspector_cli(version: str) -> str | None:
    """The cached ``@modelcontextprotocol/inspector`` CLI (``KESTREL_INSPECTOR`` overrides)."""
    explicit = os.environ.get("KESTREL_INSPECTOR")
    if explicit and Path(explicit).exists():
        return str(Path(explicit).resolve())
    return _npm_bin(_CACHE / f"inspector-{version}", "mcp-inspector")


def conformance_cli(version: str) -> str | None:
    """The cached ``@modelcontextprotocol/conformance`` CLI at ``version``."""
    return _npm_bin(_CACHE / f"conformance-{version}", "conformance")


def chromium() -> str | None:
    """A Chromium binary on PATH (Debian's ``chromium``, or ``chromium-browser``)."""
    return shutil.which("chromium") or shutil.which("chromium-browser")
