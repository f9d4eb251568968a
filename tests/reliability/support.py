"""Shared kit of the reliability suite: JSON-RPC checks, subprocess faces, in-process door.

Loaded by path through the ``rs`` fixture (tests run in importlib mode). Everything here
binds to 127.0.0.1 only and cleans up the processes it starts.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from tests import loopback
from tests.loopback import free_port

BIN = Path(sys.executable).parent
SCENARIO = "acme-trend"


# ---------------------------------------------------------------- JSON-RPC checks


def valid_id(value: Any) -> bool:
    return (isinstance(value, str | int) and not isinstance(value, bool)) or value is None


def check_response(response: Any) -> None:
    """Fail unless ``response`` is one well-formed JSON-RPC 2.0 response object."""
    assert isinstance(response, dict), response
    # Strict JSON: no NaN/Infinity, every key a string, nothing unserialisable.
    json.dumps(response, allow_nan=False)
    assert response.get("jsonrpc") == "2.0", response
    assert "id" in response, response
    assert valid_id(response["id"]), response
    assert set(response) <= {"jsonrpc", "id", "result", "error"}, response
    assert ("result" in response) != ("error" in response), response
    if "error" in response:
        error = response["error"]
        assert isinstance(error, dict), response
        assert set(error) <= {"code", "message", "data"}, response
        assert type(error["code"]) is int, response
        assert isinstance(error["message"], str), response
    else:
        assert isinstance(response["result"], dict), response


def is_request(message: Any) -> bool:
    """A well-formed request: it must get exactly one response carrying its id."""
    return (
        isinstance(message, dict)
        and message.get("jsonrpc") == "2.0"
        and isinstance(message.get("method"), str)
        and "id" in message
        and valid_id(message["id"])
        and message["id"] is not None
        and (message.get("params") is None or isinstance(message.get("params"), dict))
    )


def is_notification(message: Any) -> bool:
    return (
        isinstance(message, dict)
        and message.get("jsonrpc") == "2.0"
        and isinstance(message.get("method"), str)
        and "id" not in message
    )


# ---------------------------------------------------------------- processes


def script(name: str) -> list[str]:
    """The installed console script (as a user runs it), else ``python -m``."""
    path = BIN / name
    if path.exists():
        return [str(path)]
    return [sys.executable, "-m", name.replace("-", "_")]


def kill(proc: subprocess.Popen[Any]) -> None:
    """SIGKILL a process this suite started, and reap it."""
    if proc.poll() is None:
        os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)


def integrity(db: Path) -> str:
    """SQLite's own verdict on the file (``ok`` when sound)."""
    with sqlite3.connect(db, timeout=30) as con:
        row = con.execute("PRAGMA integrity_check").fetchone()
    con.close()
    return str(row[0])


def pseudonym(home: Path, principal: str, store: str | None = None) -> str:
    """The ``p_…`` a door on ``home`` (or ``store``) opens ``principal``'s sessions
    under: what a reference run in another home must trade as to get the same roots."""
    from kestrel_door import Pseudonyms, open_door_store

    records = open_door_store(store, home)
    try:
        return Pseudonyms(records).of(principal)
    finally:
        records.close()


def issue_token(home: Path, principal: str, *scopes: str, store: str | None = None) -> str:
    """An issued API token from the door's own CLI (in-process; it prints it last)."""
    from click.testing import CliRunner
    from kestrel_door.cli import door_group

    where = ["--home", str(home)] + (["--store", store] if store else [])
    args = [*where, "token", "issue", "--principal", principal]
    for scope in scopes or ("kestrel:read", "kestrel:trade", "kestrel:grade"):
        args += ["--scope", scope]
    result = CliRunner().invoke(door_group, args)
    assert result.exit_code == 0, result.output
    return result.output.strip().splitlines()[-1]


@dataclass
class DoorProcess:
    """``kestrel-door serve`` as a subprocess on a loopback port."""

    home: Path
    port: int
    proc: subprocess.Popen[bytes]
    stderr_path: Path

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def token(self, principal: str, *scopes: str) -> str:
        return issue_token(self.home, principal, *scopes)

    def log(self) -> str:
        return self.stderr_path.read_text(errors="replace")


def start_door(
    home: Path, port: int, *extra: str, log: Path | None = None, store: str | None = None
) -> DoorProcess:
    """``kestrel-door serve`` on ``port`` over ``home`` (and ``store``, when given)."""
    env = {**os.environ, "KESTREL_HOME": str(home)}
    if store is not None:
        env["KESTREL_STORE"] = store
    stderr_path = log or home / f"door-{port}-{time.monotonic_ns()}.log"
    with stderr_path.open("ab") as err:
        proc = subprocess.Popen(
            [*script("kestrel-door"), "serve", "--port", str(port), *extra],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=err,
        )
    door = DoorProcess(home, port, proc, stderr_path)
    deadline = time.monotonic() + 60
    while True:
        try:
            httpx.get(door.base + "/.well-known/oauth-protected-resource", timeout=2)
            return door
        except httpx.TransportError:
            if proc.poll() is not None or time.monotonic() > deadline:
                kill(proc)
                raise AssertionError(
                    "door did not start: " + stderr_path.read_text(errors="replace")
                ) from None
            time.sleep(0.05)


@contextmanager
def door_process(home: Path, *extra: str, store: str | None = None) -> Iterator[DoorProcess]:
    door = start_door(home, free_port(), *extra, store=store)
    try:
        yield door
    finally:
        kill(door.proc)


class McpStdio:
    """``kestrel-mcp`` over stdio: one JSON-RPC message per line each way."""

    def __init__(self, home: Path, stderr_path: Path) -> None:
        env = {**os.environ, "KESTREL_HOME": str(home)}
        self._err = stderr_path.open("ab")
        self.proc = subprocess.Popen(
            [*script("kestrel-mcp"), "--home", str(home)],
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._err,
        )
        self._next = 0

    def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()

    def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        self._next += 1
        rid = self._next
        self.send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params or {}})
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        assert line, "kestrel-mcp closed stdout"
        response: dict[str, Any] = json.loads(line)
        assert response.get("id") == rid, response
        return response

    def call(self, name: str, **arguments: Any) -> dict[str, Any]:
        response = self.request("tools/call", {"name": name, "arguments": arguments})
        assert "result" in response, response
        result: dict[str, Any] = response["result"]
        return result

    def initialize(self) -> None:
        self.request(
            "initialize",
            {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "reliability", "version": "1"},
            },
        )
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def kill(self) -> None:
        kill(self.proc)
        for stream in (self.proc.stdin, self.proc.stdout):
            if stream is not None:
                stream.close()
        self._err.close()

    def close(self) -> int:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        code = self.proc.wait(timeout=30)
        if self.proc.stdout is not None:
            self.proc.stdout.close()
        self._err.close()
        return code


# ---------------------------------------------------------------- in-process door


@dataclass
class LiveDoor:
    """The real door app over the real runtime, served by uvicorn on loopback."""

    base: str
    home: Path
    store: Any
    runtime: Any
    tokens: Any
    audit: Any
    transports: dict[str, Any] = field(default_factory=dict)

    def token(self, principal: str = "alice", *scopes: str) -> str:
        _, token = self.tokens.issue(
            principal, list(scopes or ("kestrel:read", "kestrel:trade", "kestrel:grade"))
        )
        return str(token)

    def client(self, token: str | None = None, **headers: str) -> httpx.AsyncClient:
        all_headers = dict(headers)
        if token is not None:
            all_headers["Authorization"] = f"Bearer {token}"
        return httpx.AsyncClient(base_url=self.base, headers=all_headers, timeout=60)


def build_door_app(home: Path, **overrides: Any) -> tuple[Any, Any, Any, Any, Any]:
    """The app wired as ``kestrel-door serve`` wires it; returns (app, store, runtime, …)."""
    import kestrel_sdk
    from kestrel_door import AuditLog, DoorConfig, DoorStore, IssuedTokens, create_door_app

    store = DoorStore(home / "door.db")
    owner = kestrel_sdk.local_transport(home=home)
    runtime = owner.runtime  # type: ignore[attr-defined]

    def transport_for(principal: str) -> Any:
        return kestrel_sdk.local_transport(principal=principal, runtime=runtime)

    tokens = IssuedTokens(store)
    audit = AuditLog(store)
    config = overrides.pop("config", None) or DoorConfig()
    extra = overrides.pop("extra_verifiers", [])
    options: dict[str, Any] = {
        "transport_for": transport_for,
        "grant_verifiers": [tokens, *extra],
        "audit": audit,
    }
    options.update(overrides)
    return create_door_app(config, **options), store, runtime, tokens, audit


def serve(app: Any, port: int | None = None) -> AbstractAsyncContextManager[str]:
    """Run ``app`` on uvicorn at 127.0.0.1 (a free port); yields its base URL."""
    return loopback.serve(app, port=port, start_timeout=20)


@asynccontextmanager
async def live_door(home: Path, **overrides: Any) -> AsyncIterator[LiveDoor]:
    app, store, runtime, tokens, audit = build_door_app(home, **overrides)
    try:
        async with serve(app) as base:
            yield LiveDoor(base, home, store, runtime, tokens, audit)
    finally:
        runtime.shutdown()
        store.close()


def count_rows(db: Path, table: str) -> int:
    with sqlite3.connect(db, timeout=30) as con:
        (n,) = con.execute(f"SELECT count(*) FROM {table}").fetchone()
    con.close()
    return int(n)
