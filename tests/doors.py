"""A real ``kestrel-door serve`` on loopback with an issued token (evaluation and board tests)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import httpx
import kestrel_sdk
from click.testing import CliRunner
from kestrel_door.attest import Attestor, attesting
from kestrel_door.cli import door_group

from tests.loopback import free_port, wait_for_http

__all__ = [
    "MCP_HEADERS",
    "Door",
    "answers",
    "attested_proof",
    "issue_token",
    "open_session",
    "serve_door",
]

SCOPES = "kestrel:read kestrel:trade kestrel:grade kestrel:trials"
MCP_HEADERS = {"Accept": "application/json, text/event-stream"}
"""What a streamable-HTTP MCP client accepts (a door's ``/mcp`` answers either)."""


@dataclass(frozen=True)
class Door:
    url: str
    token: str
    home: Path
    process: subprocess.Popen[Any] | None = field(default=None, compare=False, repr=False)
    """The door's process (a test that takes the door down mid-run stops it)."""


def issue_token(home: Path, principal: str, scopes: str = SCOPES) -> str:
    """A bearer token ``kestrel-door token issue`` makes in ``home`` for ``principal``."""
    issued = CliRunner().invoke(
        door_group,
        ["--home", str(home), "token", "issue", "--principal", principal, "--scope", scopes],
    )
    assert issued.exit_code == 0, issued.output
    return str(issued.output.strip().splitlines()[-1])


@contextmanager
def serve_door(
    home: Path,
    *extra: str,
    principal: str = "evaluated-agent",
    setup: str = "",
    port: int | None = None,
) -> Iterator[Door]:
    """``kestrel-door serve`` in its own process on a free loopback port (or ``port``: a
    door served again at its URL; ``extra`` are serve's options, e.g. ``--seal
    acme-chop``), stopped by pid afterwards. ``setup`` is Python the door's process runs
    before it starts (a test's instrument)."""
    token = issue_token(home, principal)
    port = port or free_port()
    url = f"http://127.0.0.1:{port}"
    door = subprocess.Popen(
        [
            *(sys.executable, "-c", f"{setup}\nfrom kestrel_door.cli import main; main()"),
            *("serve", "--port", str(port), *extra),
        ],
        env={**os.environ, "KESTREL_HOME": str(home)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        wait_for_http(url + "/.well-known/oauth-protected-resource", door)
        yield Door(url, token, home, door)
    finally:
        door.terminate()
        door.wait(timeout=10)


def answers(door: Door, token: str) -> tuple[httpx.Response, httpx.Response]:
    """The door's answers to ``token`` on each face: ``GET /v1/catalog`` and an MCP
    ``tools/list``."""
    auth = {"Authorization": f"Bearer {token}"}
    v1 = httpx.get(f"{door.url}/v1/catalog", headers=auth, timeout=30)
    mcp = httpx.post(
        f"{door.url}/mcp",
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        headers={**auth, **MCP_HEADERS},
        timeout=30,
    )
    return v1, mcp


def open_session(client: httpx.Client, door: Door, label: str, scenario: str = "acme-chop") -> str:
    """The id of a session ``client`` (carrying its bearer) opens on ``door`` over ``/v1``."""
    made = client.post(f"{door.url}/v1/sessions", json={"scenario": scenario, "label": label})
    assert made.status_code == 200, made.text
    sid: str = made.json()["sessionId"]
    return sid


def attested_proof(
    home: Path, attestor: Attestor, principal: str, scenario: str, sources: tuple[str, ...]
) -> dict[str, Any]:
    """The proof of ``principal``'s session of ``sources`` on ``scenario``, signed by
    ``attestor`` as a door signs it (through :func:`kestrel_door.attest.attesting`), run
    in process on a memory store in ``home``."""
    owner = kestrel_sdk.local_transport(home=home, store="memory:")
    runtime: Any = getattr(owner, "runtime", None)

    def transport_for(name: str) -> Any:
        return kestrel_sdk.local_transport(principal=name, runtime=runtime)

    async def run() -> dict[str, Any]:
        attestor.pseudonyms.load()
        try:
            async with kestrel_sdk.create_sdk(attesting(transport_for, attestor)(principal)) as sdk:
                opened = await sdk.open_session(scenario)
                assert opened.session is not None
                for source in sources:
                    await opened.session.submit(source)
                proof = await sdk.proof(opened.session.id)
            data: dict[str, Any] = proof.to_json()
            return data
        finally:
            await owner.aclose()

    return anyio.run(run)
