"""A submit slower than the door's per-call ``--timeout`` (not a wait for a bar: its
store write held up) is answered when it commits, on ``/v1`` and ``/mcp``: never 504
"the call timed out" while the journal holds the submission (was: the client was told
the call failed, retryable, though it had applied, so a retry bought twice).

Behind ``serve --timeout 1``, the test holds the runtime store's write lock (another
SQLite connection's ``BEGIN IMMEDIATE``) for three seconds while a submission is sent;
the store's busy timeout lets the submission wait for it, then apply.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

from tests.doors import MCP_HEADERS, open_session, serve_door

TIMEOUT_S = 1.0
HELD_S = 3.0


@contextmanager
def _write_lock_held(database: Path) -> Iterator[None]:
    """The store's write lock taken by another connection, released ``HELD_S`` after
    the block's body started (readers go on: the store is in WAL mode)."""
    conn = sqlite3.connect(database, isolation_level=None)
    conn.execute("BEGIN IMMEDIATE")
    released = threading.Event()
    release = threading.Timer(HELD_S, released.set)
    release.start()
    try:
        yield
    finally:
        released.wait()
        conn.execute("COMMIT")
        conn.close()


def _slow(send: Callable[[], httpx.Response], database: Path) -> httpx.Response:
    """``send``'s answer while the store's write lock is held for ``HELD_S``."""
    answered: list[httpx.Response] = []
    with _write_lock_held(database):
        sender = threading.Thread(target=lambda: answered.append(send()))
        sender.start()
    sender.join(timeout=60)
    [answer] = answered
    assert answer.elapsed.total_seconds() > TIMEOUT_S  # slower than the door's timeout
    return answer


def test_a_submit_slower_than_the_timeout_is_answered_when_it_commits(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with serve_door(home, "--timeout", str(TIMEOUT_S)) as door:
        database = home / "kestrel.db"
        auth = {"Authorization": f"Bearer {door.token}"}
        with httpx.Client(timeout=60, headers=auth) as agent:

            def frame(sid: str) -> dict[str, Any]:
                found: dict[str, Any] = agent.get(f"{door.url}/v1/sessions/{sid}/frame").json()
                shown: dict[str, Any] = found["frame"]
                return shown

            by_v1, by_mcp = open_session(agent, door, "v1"), open_session(agent, door, "mcp")
            source = "buy 5 ACME\nadvance 2000"  # a long submit: the door runs it on a thread

            answer = _slow(
                lambda: agent.post(
                    f"{door.url}/v1/sessions/{by_v1}/submit", json={"source": source}
                ),
                database,
            )
            assert (frame(by_v1)["seq"], frame(by_v1)["clock"]["bar"]) == (1, 2000)  # applied
            assert answer.status_code == 200, answer.text  # was 504 "the call timed out"
            assert answer.json()["pentad"]["seq"] == 1

            params = {
                "name": "kestrel_session_submit",
                "arguments": {"sessionId": by_mcp, "source": source},
            }
            message = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": params}
            answer = _slow(
                lambda: agent.post(f"{door.url}/mcp", json=message, headers=MCP_HEADERS),
                database,
            )
            assert (frame(by_mcp)["seq"], frame(by_mcp)["clock"]["bar"]) == (1, 2000)
            assert answer.status_code == 200, answer.text
            reply = answer.json()
            assert "error" not in reply, reply  # was -32603 "the call timed out"
            assert reply["result"].get("isError") is not True, reply
            assert reply["result"]["structuredContent"]["pentad"]["seq"] == 1

            # every other call keeps its timeout: nothing here waited past it unasked
            assert agent.get(f"{door.url}/v1/sessions/{by_v1}/frame").status_code == 200
