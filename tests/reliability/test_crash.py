"""Crash: SIGKILL ``kestrel-mcp`` and ``kestrel-door serve`` mid-session, restart, continue.

Promise (issue 7.2, spec 12): a killed process loses nothing that was answered and
corrupts nothing. Kills land at pseudo-random points from a fixed seed, both between
submits (after N answered submits) and during a write (a submit sent, the process
killed a few milliseconds later, its answer never read). After each restart the agent
opens the same label and gets the same session id back, its frame root equals the one
an uninterrupted run has at that seq, SQLite's ``PRAGMA integrity_check`` says ``ok``,
and the finished session grades to the uninterrupted run's grade root.
"""

from __future__ import annotations

import json
import random
import socket
import time
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import anyio
import httpx
import pytest
from kestrel_sdk import create_sdk, local_transport

SEED = 20261130
LABEL = "crash"


def script_of(seed: int, count: int) -> list[str]:
    """A deterministic agent: orders, cancels and advances, never running off the tape."""
    rng = random.Random(seed)
    out: list[str] = []
    for _ in range(count):
        qty = rng.randint(1, 40)
        out.append(
            rng.choice(
                [
                    f"buy {qty} ACME\nadvance {rng.randint(1, 3)}",
                    f"sell {qty} ACME\nadvance",
                    f"buy {qty} ACME limit {rng.randint(35, 60)}\nadvance 2",
                    f"advance {rng.randint(1, 3)}",
                    "cancel all\nadvance",
                ]
            )
        )
    return out


@dataclass
class Reference:
    sid: str
    roots: list[str]  # roots[seq] = frame root after seq submits
    grade_root: str


def reference(home: Path, principal: str, sources: list[str]) -> Reference:
    """The uninterrupted run, in-process, in its own home."""

    async def run() -> Reference:
        t = create_sdk(local_transport(home=home, principal=principal))
        session = (await t.open_session("acme-trend", LABEL)).session
        assert session is not None
        roots = [(await session.frame()).frame_root]
        for source in sources:
            roots.append((await session.submit(source)).delivery.frame_root)
        await session.close()
        grade = await t.grade(session.id)
        await t.aclose()
        return Reference(session.id, roots, str(grade.root))  # type: ignore[union-attr]

    return anyio.run(run)


def plan(rng: random.Random, kills: int) -> list[tuple[str, int, float]]:
    """Each kill: (``idle`` after N answered submits | ``write`` N answered then one in flight)."""
    return [
        (rng.choice(["idle", "write"]), rng.randint(0, 4), rng.uniform(0.0, 0.006))
        for _ in range(kills)
    ]


def summary(
    points: list[tuple[str, int, float]], submits: int, in_flight_applied: int, started: float
) -> dict[str, Any]:
    """The figures a crash run prints (kills by kind, submits, elapsed seconds)."""
    return {
        "kills": len(points),
        "write kills": sum(kind == "write" for kind, _, _ in points),
        "submits": submits,
        "in-flight applied": in_flight_applied,
        "seconds": round(time.perf_counter() - started, 1),
    }


# ---------------------------------------------------------------- kestrel-mcp over stdio


def _mcp_run(rs: ModuleType, tmp_path: Path, kills: int) -> dict[str, Any]:
    rng = random.Random(SEED)
    points = plan(rng, kills)
    sources = script_of(SEED, sum(n + 1 for _, n, _ in points) + 10)
    ref = reference(tmp_path / "ref", "local", sources)
    home = tmp_path / "home"
    home.mkdir()
    db = home / "kestrel.db"
    in_flight_applied = 0
    started = time.perf_counter()

    def resume(agent: Any) -> int:
        agent.initialize()
        opened = agent.call("kestrel_session_open", scenario="acme-trend", label=LABEL)
        assert opened["structuredContent"]["sessionId"] == ref.sid
        frame = agent.call("kestrel_session_frame", sessionId=ref.sid)["structuredContent"]
        seq = int(frame["frame"]["seq"])
        assert frame["frameRoot"] == ref.roots[seq], f"frame root differs at seq {seq}"
        return seq

    def submit(agent: Any, seq: int) -> int:
        result = agent.call("kestrel_session_submit", sessionId=ref.sid, source=sources[seq])
        body = result["structuredContent"]
        assert not result.get("isError"), body
        assert body["delivery"]["frameRoot"] == ref.roots[seq + 1]
        return seq + 1

    for kind, answered, delay in points:
        agent = rs.McpStdio(home, tmp_path / "mcp.log")
        seq = resume(agent)
        for _ in range(answered):
            seq = submit(agent, seq)
        if kind == "write":
            agent.send(
                {
                    "jsonrpc": "2.0",
                    "id": "w",
                    "method": "tools/call",
                    "params": {
                        "name": "kestrel_session_submit",
                        "arguments": {"sessionId": ref.sid, "source": sources[seq]},
                    },
                }
            )
            time.sleep(delay)
        agent.kill()
        assert rs.integrity(db) == "ok"
        if kind == "write":
            probe = rs.McpStdio(home, tmp_path / "mcp.log")
            after = resume(probe)
            assert after in (seq, seq + 1)
            in_flight_applied += after - seq
            probe.close()

    agent = rs.McpStdio(home, tmp_path / "mcp.log")
    seq = resume(agent)
    while seq < len(sources):
        seq = submit(agent, seq)
    agent.call("kestrel_session_close", sessionId=ref.sid)
    grade = agent.call("kestrel_grade", sessionId=ref.sid)["structuredContent"]
    assert agent.close() == 0
    assert grade["root"] == ref.grade_root
    assert rs.integrity(db) == "ok"
    assert "Traceback" not in (tmp_path / "mcp.log").read_text(errors="replace")
    return summary(points, len(sources), in_flight_applied, started)


def test_sigkill_mcp_stdio(rs: ModuleType, tmp_path: Path) -> None:
    print("\nkestrel-mcp SIGKILL:", _mcp_run(rs, tmp_path, kills=8))


@pytest.mark.slow
def test_sigkill_mcp_stdio_long(rs: ModuleType, tmp_path: Path) -> None:
    print("\nkestrel-mcp SIGKILL:", _mcp_run(rs, tmp_path, kills=50))


# ---------------------------------------------------------------- kestrel-door serve


def _send_raw(port: int, token: str, path: str, body: dict[str, Any]) -> socket.socket:
    """Write one HTTP request and return without reading the answer."""
    data = json.dumps(body).encode()
    head = (
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
        f"Authorization: Bearer {token}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(data)}\r\n\r\n"
    ).encode()
    sock = socket.create_connection(("127.0.0.1", port))
    sock.sendall(head + data)
    return sock


def _door_run(rs: ModuleType, tmp_path: Path, kills: int) -> dict[str, Any]:
    rng = random.Random(SEED + 1)
    points = plan(rng, kills)
    sources = script_of(SEED + 1, sum(n + 1 for _, n, _ in points) + 10)
    home = tmp_path / "home"
    home.mkdir()
    token = rs.issue_token(home, "alice")
    # the door opens alice's sessions under her pseudonym: the reference trades as it
    ref = reference(tmp_path / "ref", rs.pseudonym(home, "alice"), sources)
    auth = {"Authorization": f"Bearer {token}"}
    in_flight_applied = 0
    started = time.perf_counter()

    def resume(base: str) -> int:
        opened = httpx.post(
            base + "/v1/sessions", json={"scenario": "acme-trend", "label": LABEL}, headers=auth
        )
        assert opened.status_code == 200, opened.text
        assert opened.json()["sessionId"] == ref.sid
        frame = httpx.get(f"{base}/v1/sessions/{ref.sid}/frame", headers=auth).json()
        seq = int(frame["frame"]["seq"])
        assert frame["frameRoot"] == ref.roots[seq], f"frame root differs at seq {seq}"
        return seq

    def submit(base: str, seq: int) -> int:
        response = httpx.post(
            f"{base}/v1/sessions/{ref.sid}/submit",
            json={"source": sources[seq]},
            headers=auth,
            timeout=30,
        )
        assert response.status_code == 200, response.text
        assert response.json()["delivery"]["frameRoot"] == ref.roots[seq + 1]
        return seq + 1

    for kind, answered, delay in points:
        with rs.door_process(home) as door:
            seq = resume(door.base)
            for _ in range(answered):
                seq = submit(door.base, seq)
            if kind == "write":
                sock = _send_raw(
                    door.port, token, f"/v1/sessions/{ref.sid}/submit", {"source": sources[seq]}
                )
                time.sleep(delay)
                rs.kill(door.proc)
                sock.close()
        assert rs.integrity(home / "kestrel.db") == "ok"
        assert rs.integrity(home / "door.db") == "ok"
        if kind == "write":
            with rs.door_process(home) as door:
                after = resume(door.base)
            assert after in (seq, seq + 1)
            in_flight_applied += after - seq

    with rs.door_process(home) as door:
        seq = resume(door.base)
        while seq < len(sources):
            seq = submit(door.base, seq)
        closed = httpx.post(f"{door.base}/v1/sessions/{ref.sid}/close", headers=auth)
        assert closed.status_code == 200, closed.text
        graded = httpx.post(f"{door.base}/v1/sessions/{ref.sid}/grade", headers=auth, timeout=30)
        assert graded.status_code == 200, graded.text
        assert graded.json()["root"] == ref.grade_root
    assert rs.integrity(home / "kestrel.db") == "ok"
    assert rs.integrity(home / "door.db") == "ok"
    return summary(points, len(sources), in_flight_applied, started)


def test_sigkill_door(rs: ModuleType, tmp_path: Path) -> None:
    print("\nkestrel-door SIGKILL:", _door_run(rs, tmp_path, kills=8))


@pytest.mark.slow
def test_sigkill_door_long(rs: ModuleType, tmp_path: Path) -> None:
    print("\nkestrel-door SIGKILL:", _door_run(rs, tmp_path, kills=50))
