"""The official MCP conformance suite, each pinned version, against ``kestrel-door serve``.

The door runs as its own process on a free loopback port with a freshly issued token. The
suite's client sends no credential, so a byte-level proxy (``auth_proxy``) adds the token's
``Authorization`` header and changes nothing else. Each suite runs once over all of its
server scenarios; the results are compared with ``expected.toml`` (every scenario listed:
``pass``, ``not-applicable`` or ``pending``) and printed as a table at the end of the run.
Needs Node 22 and the suites from ``bash .ci/install-node.sh``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from tests.conformance.auth_proxy import auth_proxy
from tests.conformance.expectations import (
    TABLES,
    Suite,
    compare,
    load_suites,
    read_outcomes,
    table,
)
from tests.loopback import free_port, wait_for_http
from tests.peers import INSTALL_NODE, conformance_cli, node_22, require_peer

SUITES = load_suites()
DOOR = str(Path(sys.executable).with_name("kestrel-door"))
SCOPES = "kestrel:read kestrel:trade kestrel:grade"


def _door_env(home: Path) -> dict[str, str]:
    return {
        **os.environ,
        "HOME": str(home),
        "KESTREL_HOME": str(home / ".kestrel"),
        "KESTREL_SECRET_STORE": "file",
        "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring",
    }


@pytest.fixture(scope="module")
def node() -> str:
    return require_peer(node_22(), what="Node >= 22", install=INSTALL_NODE)


@pytest.fixture
def conformance(node: str, suite: Suite) -> list[str]:
    """How to run ``suite``: its cached CLI, run by Node 22 directly."""
    cli = require_peer(
        conformance_cli(suite.version),
        what=f"@modelcontextprotocol/conformance@{suite.version}",
        install=INSTALL_NODE,
    )
    return [node, cli]


@pytest.fixture(scope="module")
def door(node: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[int, str]]:
    """``kestrel-door serve`` on a free loopback port, and a token it issued: (port, token)."""
    home = tmp_path_factory.mktemp("door-home")
    env = _door_env(home)
    issued = subprocess.run(
        [DOOR, "token", "issue", "--principal", "conformance", "--scope", SCOPES],
        capture_output=True,
        text=True,
        env=env,
        check=True,
        timeout=120,
    )
    token = issued.stdout.strip().splitlines()[-1]
    port = free_port()
    log = (home / "door.log").open("w")
    process = subprocess.Popen(
        [DOOR, "serve", "--port", str(port)], env=env, stdout=log, stderr=subprocess.STDOUT
    )
    try:
        wait_for_http(f"http://127.0.0.1:{port}/.well-known/oauth-protected-resource", process)
        yield port, token
    finally:
        process.terminate()
        process.wait(timeout=30)
        log.close()


@pytest.mark.anyio
@pytest.mark.parametrize("suite", SUITES, ids=[suite.version for suite in SUITES])
async def test_conformance_suite_matches_expected_results(
    suite: Suite,
    conformance: list[str],
    door: tuple[int, str],
    tmp_path: Path,
    request: pytest.FixtureRequest,
) -> None:
    port, token = door
    out_dir = tmp_path / "results"
    async with auth_proxy(port, token) as proxy_port:
        with anyio.fail_after(600):
            url = f"http://127.0.0.1:{proxy_port}/mcp"
            done = await anyio.run_process(
                [*conformance, "server", "--url", url, *suite.args, "-o", str(out_dir)],
                check=False,
                cwd=tmp_path,
            )
    outcomes = read_outcomes(out_dir, suite)
    lines = table(suite, outcomes)
    request.config.stash.setdefault(TABLES, []).extend(lines)
    assert outcomes, (done.stdout + done.stderr).decode(errors="replace")[-4000:]
    problems = compare(suite, outcomes)
    assert not problems, "\n".join([*problems, "", *lines])
