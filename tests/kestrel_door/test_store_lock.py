"""A door keeps serving every client while one client's short submit waits on the store's
write lock (held by another process on the same store: the ``kestrel`` CLI, a second
replica, a checkpoint), and that submit applies once the lock is released.

Was: a short submit ran on the door's event loop, so while SQLite's write lock was held
the whole door froze, every client, for up to the store's 30 s busy timeout.

The test holds the lock from another SQLite connection (``BEGIN IMMEDIATE``), sends a
submit of one bar in full over its own socket, then reads the catalog and another
session's frame: both must answer while the lock is still held and the submit is still
unanswered (as is a read of the submit's own session, which waits for the submit
without holding up anyone else); only then is the lock released.
"""

from __future__ import annotations

import json
import select
import socket
import sqlite3
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx

from tests import replay_gate
from tests.doors import open_session, serve_door
from tests.session_gate import ARMED, LOOKED, WAITING

PROMPT_S = 5.0
"""How long a read may take while the lock is held (the store's busy timeout is 30 s)."""


def _send(url: str, token: str, method: str, path: str, sent: Any = None) -> socket.socket:
    """A socket whose request was sent in full (the door has it), ``sent`` as JSON."""
    where = urlsplit(url)
    body = b"" if sent is None else json.dumps(sent).encode()
    head = (
        f"{method} {path} HTTP/1.1\r\n"
        f"Host: {where.netloc}\r\n"
        f"Authorization: Bearer {token}\r\n"
        "Content-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n"
        "Connection: close\r\n\r\n"
    )
    sock = socket.create_connection((where.hostname, where.port), timeout=60)
    sock.sendall(head.encode() + body)
    return sock


def _answered(sock: socket.socket) -> bool:
    readable, _, _ = select.select([sock], [], [], 0)
    return bool(readable)


def _answer(sock: socket.socket) -> tuple[int, Any]:
    """The status and JSON body of the answer on ``sock`` (read until the door closes it)."""
    received = b""
    while chunk := sock.recv(65536):
        received += chunk
    sock.close()
    head, _, body = received.partition(b"\r\n\r\n")
    return int(head.split()[1]), json.loads(body)


def test_a_submit_waiting_on_the_store_lock_leaves_every_other_client_served(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    with serve_door(home) as door:
        auth = {"Authorization": f"Bearer {door.token}"}
        with httpx.Client(timeout=PROMPT_S, headers=auth) as agent:
            waiting = open_session(agent, door, "waiting")
            other = open_session(agent, door, "other")
            path = f"/v1/sessions/{waiting}"
            assert agent.get(f"{door.url}/v1/catalog").status_code == 200
            assert agent.get(f"{door.url}/v1/sessions/{other}/frame").status_code == 200

            holder = sqlite3.connect(home / "kestrel.db", isolation_level=None)
            holder.execute("BEGIN IMMEDIATE")  # another process writing the store
            try:
                source = {"source": "buy 1 ACME\nadvance 1"}
                submit = _send(door.url, door.token, "POST", f"{path}/submit", source)
                own = _send(door.url, door.token, "GET", f"{path}/frame")  # waits for it
                # was: httpx.ReadTimeout, the door frozen until the lock was released
                catalog = agent.get(f"{door.url}/v1/catalog")
                frame = agent.get(f"{door.url}/v1/sessions/{other}/frame")
                assert catalog.status_code == 200, catalog.text
                assert frame.status_code == 200, frame.text
                assert frame.json()["frame"]["seq"] == 0
                assert not _answered(submit)  # still waiting on the lock
            finally:
                holder.execute("COMMIT")
                holder.close()

            status, applied = _answer(submit)
            assert status == 200, applied
            assert applied["pentad"]["seq"] == 1
            status, read = _answer(own)
            assert status == 200, read
            assert read["frame"]["seq"] in {0, 1}  # read before or after the submit applied
            shown = agent.get(f"{door.url}/v1/sessions/{waiting}/frame").json()["frame"]
            assert (shown["seq"], shown["clock"]["bar"]) == (1, 1)


def _wait_for(signal: Path) -> None:
    """Until the door's process writes ``signal`` (a file: the door is another process)."""
    deadline = time.monotonic() + 30
    while not signal.exists():
        assert time.monotonic() < deadline, f"the door never wrote {signal.name}"
        time.sleep(0.01)


def test_a_read_that_finds_its_session_free_as_a_submit_takes_it_holds_up_no_one(
    tmp_path: Path,
) -> None:
    """The read of a session on the door's event loop looked, found the session free, and
    in that instant a submit took the session's lock (then waited on the store's write
    lock, held by another process). The read must wait for the submit off the loop, every
    other client still served, and then show the submit's step whole.

    Was: the read, already bound for the loop, waited there for the lock: the whole door
    froze until the store's lock was released. The interleaving is made certain in the
    door's process (``tests/session_gate.py``), so the test fails every time on the old
    code, not once in a while."""
    home = tmp_path / "home"
    setup = f"import tests.session_gate as gate; gate.install({str(home)!r})"
    with serve_door(home, setup=setup) as door:
        auth = {"Authorization": f"Bearer {door.token}"}
        with httpx.Client(timeout=PROMPT_S, headers=auth) as agent:
            waiting = open_session(agent, door, "waiting")
            path = f"/v1/sessions/{waiting}"
            assert agent.get(f"{door.url}{path}/frame").status_code == 200

            holder = sqlite3.connect(home / "kestrel.db", isolation_level=None)
            holder.execute("BEGIN IMMEDIATE")  # another process writing the store
            (home / ARMED).touch()
            try:
                source = {"source": "buy 1 ACME\nadvance 1"}
                submit = _send(door.url, door.token, "POST", f"{path}/submit", source)
                _wait_for(home / WAITING)  # the submit is at the session's lock
                own = _send(door.url, door.token, "GET", f"{path}/frame")
                # was: httpx.ReadTimeout, the door frozen until the lock was released
                _wait_for(home / LOOKED)  # the read is at the lock, the submit about to take it
                catalog = agent.get(f"{door.url}/v1/catalog")
                assert catalog.status_code == 200, catalog.text
                assert not (home / ARMED).exists()  # the interleaving happened
                assert not _answered(submit)  # still waiting on the store's lock
                assert not _answered(own)  # waiting for the submit, off the loop
            finally:
                holder.execute("COMMIT")
                holder.close()

            status, applied = _answer(submit)
            assert status == 200, applied
            status, read = _answer(own)
            assert status == 200, read
            assert read == applied["delivery"]  # the step whole: its frame, never half of it
            assert read["frame"]["seq"] == applied["pentad"]["seq"] == 1


def test_a_read_of_a_session_another_thread_is_replaying_holds_up_no_one(
    tmp_path: Path,
) -> None:
    """A door keeping one session engine: session A is evicted, a submit of A (a worker
    thread) is replaying A's journal, held there, when a read of A comes on the event
    loop. Every other client must still be served, and the read must answer A's frame
    as the submit left it, once the replay and the submit are done.

    Was: the read waited on the loop for the replay (the session's rebuild lock), the
    whole door frozen until it ended. The interleaving is made certain in the door's
    process (``tests/replay_gate.py``): the test fails every time on the old code."""
    home = tmp_path / "home"
    setup = f"import tests.replay_gate as gate; gate.install({str(home)!r})"
    with serve_door(home, "--max-live-sessions", "1", setup=setup) as door:
        auth = {"Authorization": f"Bearer {door.token}"}
        with httpx.Client(timeout=PROMPT_S, headers=auth) as agent:
            evicted = open_session(agent, door, "evicted")
            other = open_session(agent, door, "other")
            path = f"/v1/sessions/{evicted}"
            assert agent.get(f"{door.url}{path}/frame").status_code == 200
            # the one engine kept is the other's now: A is evicted
            assert agent.get(f"{door.url}/v1/sessions/{other}/frame").status_code == 200

            (home / replay_gate.ARMED).touch()
            try:
                source = {"source": "buy 1 ACME\nadvance 1"}
                submit = _send(door.url, door.token, "POST", f"{path}/submit", source)
                _wait_for(home / replay_gate.HELD)  # the submit is replaying A, held
                own = _send(door.url, door.token, "GET", f"{path}/frame")
                _wait_for(home / replay_gate.LOOKED)  # the read came for A on the loop
                # was: httpx.ReadTimeout, the door frozen until the replay ended
                catalog = agent.get(f"{door.url}/v1/catalog")
                assert catalog.status_code == 200, catalog.text
                assert not _answered(submit)  # still held in its replay
                assert not _answered(own)  # waiting for the replay, off the loop
            finally:
                (home / replay_gate.RELEASE).touch()

            status, applied = _answer(submit)
            assert status == 200, applied
            status, read = _answer(own)
            assert status == 200, read
            assert read["frame"]["seq"] in {0, 1}  # read before or after the submit applied
            if read["frame"]["seq"] == 1:
                assert read == applied["delivery"]  # the step whole, never half of it
            shown = agent.get(f"{door.url}{path}/frame").json()["frame"]
            assert (shown["seq"], shown["clock"]["bar"]) == (1, 1)
            assert agent.get(f"{door.url}/v1/sessions/{other}/frame").status_code == 200
