"""A host runs a turn, publishes it, mints a turn credential, and an MCP client in
another process uses it over the door; when the turn ends the token stops resolving.

    uv run python examples/harness.py

(in the clone: the child is the official ``mcp`` client, a dev dependency of the
workspace, which plain ``uv run`` installs with the rest).

The host owns the runtime, the door and the harness. The credential it mints states
nothing: it points at "the turn now in flight on thread T", so the child process can do
exactly what that turn can do (its own tools, guard and audit), and nothing once the
turn is over. The token reaches the child through its environment, never argv.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import anyio
import httpx2
import uvicorn
from kestrel_door import DoorConfig, DoorTurnTools, create_door_app, create_turn_credentials
from kestrel_protocol.ports import LiveTurn, RunContext
from kestrel_sdk import local_transport
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

TOKEN_ENV = "KESTREL_TURN_TOKEN"


async def child(url: str) -> int:
    """The other process: an official MCP client holding only the turn credential."""
    token = os.environ[TOKEN_ENV]
    http = httpx2.AsyncClient(
        headers={"Authorization": f"Bearer {token}"}, timeout=httpx2.Timeout(30, read=300)
    )
    try:
        async with http, Client(streamable_http_client(url, http_client=http)) as client:
            opened = await client.call_tool("kestrel_session_open", {"scenario": "acme-trend"})
            sid = opened.structured_content["sessionId"]
            sent = await client.call_tool(
                "kestrel_session_submit", {"sessionId": sid, "source": "buy 10 ACME\nadvance 5\n"}
            )
            equity = sent.structured_content["delivery"]["frame"]["account"]["equity"]
            print(f"child: opened {sid}, equity after 5 bars {equity}")
            return 0
    except Exception as exc:
        print(f"child: refused: {_said(exc)}")
        return 3


def _said(exc: BaseException) -> str:
    """The error the door's answer raised (the MCP client raises it inside an exception
    group): for a credential that no longer resolves, the door's refusal message."""
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    return f"{type(exc).__name__}: {exc}"


def _run_child(url: str, token: str) -> int:
    env = {**os.environ, TOKEN_ENV: token}
    return subprocess.run(
        [sys.executable, __file__, "--child", url], env=env, check=False
    ).returncode


async def host() -> int:
    home = Path(tempfile.mkdtemp(prefix="kestrel-harness-"))
    runtime_owner: Any = local_transport(home=home)
    transport = local_transport(principal="host-user", runtime=runtime_owner.runtime)
    creds = create_turn_credentials()

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    base = f"http://127.0.0.1:{sock.getsockname()[1]}"
    app = create_door_app(
        DoorConfig(base_url=base),
        transport_for=lambda principal: local_transport(
            principal=principal, runtime=runtime_owner.runtime
        ),
        turn_credentials=creds,
    )
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    async with anyio.create_task_group() as tg:
        tg.start_soon(server.serve, [sock])
        while not server.started:
            await anyio.sleep(0.01)

        # The host's turn: its own context and its own tools (guard + audit inside).
        ctx = RunContext(
            venue="harness",
            presence="present",
            principal="host-user",
            scopes=frozenset({"kestrel:read", "kestrel:trade", "kestrel:grade"}),
        )
        turn = LiveTurn(ctx=ctx, tools=DoorTurnTools(ctx, transport))
        dispose = creds.publish("thread-1", turn)
        token = creds.mint("thread-1")
        assert token is not None
        print("host: turn published on thread-1, credential minted")
        during = await anyio.to_thread.run_sync(_run_child, base + "/mcp", token)
        dispose()
        print("host: turn ended")
        after = await anyio.to_thread.run_sync(_run_child, base + "/mcp", token)
        server.should_exit = True
    await transport.aclose()
    await runtime_owner.aclose()
    ok = during == 0 and after != 0
    print(
        "harness:",
        "ok" if ok else "FAILED",
        f"(during turn exit {during}, after turn exit {after})",
    )
    return 0 if ok else 1


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--child":
        sys.exit(anyio.run(child, sys.argv[2]))
    sys.exit(anyio.run(host))
