"""Run the official MCP conformance suite against the door's ``/mcp``.

    source "$(bash .ci/install-node.sh --env-file)"      # node >= 22 on PATH
    npm install --prefix /tmp/conf @modelcontextprotocol/conformance
    uv run python packages/kestrel-door/scripts/conformance.py \
        --conformance /tmp/conf/node_modules/.bin/conformance

The door runs in-process on a loopback port over the real runtime, its ``/mcp`` generated
from ``kestrel_protocol.surface`` (no secrets tools). The suite's client sends no credential, so a
wrapper in front of the door adds an issued token's ``Authorization`` header to requests
that carry none; everything else (Host/Origin guard included) is the door as served.
Prints one line per scenario and a summary; ``--json`` writes the results.
"""

from __future__ import annotations

import argparse
import json
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import kestrel_sdk
import uvicorn
from kestrel_door import AuditLog, DoorConfig, DoorStore, IssuedTokens, create_door_app

SCENARIOS = [
    "server-initialize",
    "ping",
    "tools-list",
    "resources-list",
    "prompts-list",
    "completion-complete",
    "logging-set-level",
    "server-sse-polling",
    "server-sse-multiple-streams",
    "dns-rebinding-protection",
    "json-schema-2020-12",
    "resources-templates-read",
    "resources-read-text",
    "tools-call-simple-text",
    "tools-call-error",
]


def _app(home: Path, port: int) -> tuple[Any, str]:
    owner: Any = kestrel_sdk.local_transport(home=home)
    store = DoorStore(home / "door.db")
    _, token = IssuedTokens(store).issue("conformance", ["kestrel:read", "kestrel:trade"])
    door = create_door_app(
        DoorConfig(base_url=f"http://127.0.0.1:{port}"),
        transport_for=lambda p: kestrel_sdk.local_transport(principal=p, runtime=owner.runtime),
        grant_verifiers=[IssuedTokens(store)],
        audit=AuditLog(store),
    )
    auth = (b"authorization", f"Bearer {token}".encode())

    async def app(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and not any(k == b"authorization" for k, _ in scope["headers"]):
            scope = {**scope, "headers": [*scope["headers"], auth]}
        await door(scope, receive, send)

    return app, token


def _say(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--conformance", required=True, help="path to the conformance CLI")
    parser.add_argument("--scenario", action="append", default=None)
    parser.add_argument("--json", dest="json_out", default=None)
    args = parser.parse_args()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    home = Path(tempfile.mkdtemp(prefix="kestrel-conformance-"))
    app, _ = _app(home, port)
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.05)
    url = f"http://127.0.0.1:{port}/mcp"
    results: dict[str, str] = {}
    for scenario in args.scenario or SCENARIOS:
        out_dir = home / "out" / scenario
        done = subprocess.run(
            [args.conformance, "server", "--url", url, "--scenario", scenario, "-o", str(out_dir)],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        results[scenario] = "pass" if done.returncode == 0 else "fail"
        _say(f"{results[scenario]:<5} {scenario}")
        if done.returncode != 0:
            tail = (done.stdout + done.stderr).strip().splitlines()[-12:]
            _say("      " + "\n      ".join(tail))
    server.should_exit = True
    thread.join(timeout=10)
    passed = sum(1 for r in results.values() if r == "pass")
    _say(f"{passed} passed, {len(results) - passed} failed")
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
