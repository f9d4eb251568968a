"""Load: many sessions through ``kestrel-door serve`` from 64 concurrent clients.

Promise (issue 7.3): under concurrency nothing errs and nothing is lost: every submit
is answered 200, every session's closed record lists exactly the pentads its submits
returned (in order, each fetchable as an artifact), and every grade verifies. The
figures (throughput, p50/p99 submit latency, memory per open session) are printed for
the README. Memory per open session is measured with tracemalloc on the runtime itself
(the door process's RSS is printed too); the target is 50 KiB plus the shared tape.
"""

from __future__ import annotations

import gc
import statistics
import time
import tracemalloc
from pathlib import Path
from types import ModuleType
from typing import Any

import anyio
import httpx
import pytest
from kestrel_sdk.runtime import Runtime

CLIENTS = 64
MEMORY_TARGET = 50 * 1024


def _source(session: int, step: int) -> str:
    side = "buy" if (session + step) % 3 else "sell"
    return f"{side} {1 + (session * 7 + step) % 5} ACME\nadvance"


async def _grade(client: httpx.AsyncClient, sid: str) -> dict[str, Any]:
    graded = await client.post(f"/v1/sessions/{sid}/grade")
    while graded.status_code == 202:  # a long grade answers with an operation to resume
        token = graded.json()["token"]
        await anyio.sleep(graded.json()["resumeAfterMs"] / 1000)
        graded = await client.post("/v1/operations/resume", json={"token": token})
    assert graded.status_code == 200, graded.text
    result: dict[str, Any] = graded.json()
    return result


async def _drive(
    base: str, token: str, sessions: int, submits: int
) -> tuple[list[float], dict[str, int]]:
    latencies: list[float] = []
    tally = {"sessions": 0, "submits": 0, "pentads": 0, "verified": 0, "artifacts": 0}
    queue = iter(range(sessions))

    async def client_loop() -> None:
        limits = httpx.Limits(max_connections=1)
        async with httpx.AsyncClient(
            base_url=base,
            headers={"Authorization": f"Bearer {token}"},
            timeout=120,
            limits=limits,
        ) as client:
            for n in queue:
                opened = await client.post(
                    "/v1/sessions", json={"scenario": "acme-trend", "label": f"load-{n}"}
                )
                assert opened.status_code == 200, opened.text
                sid = opened.json()["sessionId"]
                roots: list[str] = []
                for step in range(submits):
                    t0 = time.perf_counter()
                    response = await client.post(
                        f"/v1/sessions/{sid}/submit", json={"source": _source(n, step)}
                    )
                    latencies.append(time.perf_counter() - t0)
                    assert response.status_code == 200, response.text
                    body = response.json()
                    assert body["pentad"]["seq"] == step + 1
                    roots.append(body["pentad"]["root"])
                    tally["submits"] += 1
                closed = await client.post(f"/v1/sessions/{sid}/close")
                assert closed.status_code == 200, closed.text
                assert closed.json()["pentads"] == roots, "a pentad was lost or reordered"
                tally["pentads"] += len(roots)
                # Spot-check that the pentads are stored artifacts (first and last).
                for root in {roots[0], roots[-1]}:
                    got = await client.get(f"/v1/artifacts/{root}")
                    assert got.status_code == 200, got.text
                    assert got.json()["root"] == root
                    tally["artifacts"] += 1
                grade = await _grade(client, sid)
                verified = await client.post("/v1/verify", json={"grade": grade})
                assert verified.status_code == 200, verified.text
                assert verified.json()["ok"] is True, verified.json()
                tally["verified"] += 1
                tally["sessions"] += 1

    async with anyio.create_task_group() as tg:
        for _ in range(CLIENTS):
            tg.start_soon(client_loop)
    return latencies, tally


def _rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def _load(rs: ModuleType, tmp_path: Path, sessions: int, submits: int) -> None:
    home = tmp_path / "home"
    home.mkdir()
    token = rs.issue_token(home, "loader")
    with rs.door_process(home) as door:
        rss_before = _rss_kib(door.proc.pid)
        started = time.perf_counter()
        latencies, tally = anyio.run(_drive, door.base, token, sessions, submits)
        elapsed = time.perf_counter() - started
        rss_after = _rss_kib(door.proc.pid)
        assert door.proc.poll() is None, "the door died under load"
    log = door.stderr_path.read_text(errors="replace")
    assert "Traceback" not in log, log[-2000:]
    assert tally["sessions"] == sessions
    assert tally["submits"] == tally["pentads"] == sessions * submits
    assert tally["verified"] == sessions
    assert rs.integrity(home / "kestrel.db") == "ok"
    ordered = sorted(latencies)
    p99 = ordered[int(len(ordered) * 0.99) - 1]
    print(
        f"\nload: {sessions} sessions x {submits} submits, {CLIENTS} clients: "
        f"{tally['submits']} submits in {elapsed:.1f}s = "
        f"{tally['submits'] / elapsed:.0f} submits/s "
        f"(end to end incl. open/close/grade/verify); submit p50 "
        f"{statistics.median(ordered) * 1000:.1f} ms, p99 {p99 * 1000:.1f} ms; "
        f"door RSS {rss_before // 1024} -> {rss_after // 1024} MiB"
    )


def test_load_bounded(rs: ModuleType, tmp_path: Path) -> None:
    _load(rs, tmp_path, sessions=64, submits=20)


@pytest.mark.slow
def test_load_1000_sessions(rs: ModuleType, tmp_path: Path) -> None:
    _load(rs, tmp_path, sessions=1000, submits=50)


def _memory_per_session(tmp_path: Path, count: int) -> float:
    """Bytes the runtime holds per open session (after its first submit), tape excluded."""
    runtime = Runtime(tmp_path / "mem")
    try:
        warm = runtime.open_session("mem", "acme-trend", "warm", None)
        runtime.submit("mem", str(warm.session_id), "buy 1 ACME\nadvance")  # loads the tape
        gc.collect()
        tracemalloc.start()
        base, _ = tracemalloc.get_traced_memory()
        for i in range(count):
            opened = runtime.open_session("mem", "acme-trend", f"m{i}", None)
            runtime.submit("mem", str(opened.session_id), "buy 1 ACME\nadvance")
        gc.collect()
        held, _ = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    finally:
        runtime.shutdown()
    return (held - base) / count


def test_memory_per_open_session(tmp_path: Path) -> None:
    per = _memory_per_session(tmp_path, 300)
    print(f"\nmemory per open session: {per / 1024:.1f} KiB (300 sessions, tracemalloc)")
    assert per <= MEMORY_TARGET, f"{per / 1024:.1f} KiB per open session"


@pytest.mark.slow
def test_memory_per_open_session_1000(tmp_path: Path) -> None:
    per = _memory_per_session(tmp_path, 1000)
    print(f"\nmemory per open session: {per / 1024:.1f} KiB (1000 sessions, tracemalloc)")
    assert per <= MEMORY_TARGET, f"{per / 1024:.1f} KiB per open session"
