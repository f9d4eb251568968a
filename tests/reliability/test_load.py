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
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import anyio
import httpx
import pytest
from kestrel_protocol import GradeResult
from kestrel_sdk.runtime import Runtime, pentads
from kestrel_sdk.runtime.pentads import pentad_root

CLIENTS = 64
MEMORY_TARGET = 50 * 1024


def _source(session: int, step: int) -> str:
    side = "buy" if (session + step) % 3 else "sell"
    return f"{side} {1 + (session * 7 + step) % 5} ACME\nadvance"


class _Replicas:
    """One client's connections to every replica: each call goes to the replica its
    session and step choose, and fails over to the next one when that replica does not
    answer (as a load balancer would). No replica is written off for good: a keep-alive
    connection closed by a live replica fails one attempt, not the replica."""

    def __init__(self, bases: list[str], token: str) -> None:
        headers = {"Authorization": f"Bearer {token}"}
        limits = httpx.Limits(max_connections=1)
        self.clients = [
            httpx.AsyncClient(base_url=b, headers=headers, timeout=120, limits=limits)
            for b in bases
        ]
        self.failovers = 0

    async def aclose(self) -> None:
        for client in self.clients:
            await client.aclose()

    async def call(
        self,
        turn: int,
        method: str,
        path: str,
        body: dict[str, Any] | None = None,
        *,
        retry: bool = True,
    ) -> httpx.Response | None:
        """The response of the replica ``turn`` chooses, else of the next live one; with
        ``retry=False``, ``None`` when the chosen replica died before answering (a call
        that changes state may then have been applied: the caller finds out)."""
        for offset in range(len(self.clients)):
            index = (turn + offset) % len(self.clients)
            try:
                response = await self.clients[index].request(method, path, json=body)
            except httpx.ConnectError:  # nothing was sent: the next replica, safely
                self.failovers += 1
                continue
            except httpx.TransportError:  # sent, unanswered: it may have been applied
                self.failovers += 1
                if not retry:
                    return None
                continue
            refusal = response.json().get("refusal") if response.status_code >= 400 else None
            assert not (refusal and refusal.get("code") == "UNKNOWN_SESSION"), response.text
            return response
        raise AssertionError(f"no replica answered {method} {path}")

    async def must(
        self, turn: int, method: str, path: str, body: dict[str, Any] | None = None
    ) -> httpx.Response:
        response = await self.call(turn, method, path, body)
        assert response is not None
        return response


async def _grade(replicas: _Replicas, turn: int, sid: str) -> dict[str, Any]:
    graded = await replicas.must(turn, "POST", f"/v1/sessions/{sid}/grade")
    while graded.status_code == 202:  # a long grade answers with an operation to resume
        token = graded.json()["token"]
        await anyio.sleep(graded.json()["resumeAfterMs"] / 1000)
        turn += 1  # resumed on the next replica: the token is good on any
        graded = await replicas.must(turn, "POST", "/v1/operations/resume", {"token": token})
    assert graded.status_code == 200, graded.text
    result: dict[str, Any] = graded.json()
    return result


class _Run:
    """What the clients saw: latencies, tallies and each session's roots."""

    def __init__(self) -> None:
        self.latencies: list[float] = []
        self.tally = {"sessions": 0, "submits": 0, "pentads": 0, "verified": 0, "artifacts": 0}
        # sid -> (pentad roots, head frame root, grade metrics). Not the grade root: the
        # no-lookahead check depends on how far the principal's other sessions on the
        # scenario had gone at each submission (docs/evaluation.md), which the order of
        # concurrent sessions decides; the journal, the head frame and the metrics do not.
        self.roots: dict[str, tuple[list[str], str, Any]] = {}
        self.failovers = 0
        self.ambiguous = 0  # submits whose replica died after committing, before answering


async def _drive(
    bases: list[str],
    token: str,
    sessions: int,
    submits: int,
    kill: Callable[[], None] | None = None,
) -> _Run:
    """64 clients, each session's calls spread over the replicas in turn; ``kill`` is
    called once a third of the submits are done (a replica dies mid-run)."""
    run = _Run()
    queue = iter(range(sessions))
    kill_at = sessions * submits // 3 if kill is not None else -1

    async def submit(
        replicas: _Replicas, turn: int, sid: str, seq: int, *, source: str, prev: str
    ) -> tuple[int, str, str]:
        """Submission ``seq`` exactly once: (seq, pentad root, frame root). When its
        replica dies before answering, the session's frame (read on another replica)
        tells whether it was applied; if not, it is submitted again."""
        path = f"/v1/sessions/{sid}/submit"
        while True:
            t0 = time.perf_counter()
            response = await replicas.call(turn, "POST", path, {"source": source}, retry=False)
            if response is not None:
                run.latencies.append(time.perf_counter() - t0)
                assert response.status_code == 200, response.text
                body = response.json()
                pentad = body["pentad"]
                return pentad["seq"], pentad["root"], body["delivery"]["frameRoot"]
            frame = (await replicas.must(turn, "GET", f"/v1/sessions/{sid}/frame")).json()
            if frame["frame"]["seq"] == seq:  # the dying replica had committed it
                run.ambiguous += 1
                return seq, pentad_root(sid, seq, prev, source), frame["frameRoot"]
            assert frame["frame"]["seq"] == seq - 1, frame  # not applied: submit again
            turn += 1  # on the next replica

    async def client_loop() -> None:
        replicas = _Replicas(bases, token)
        try:
            for n in queue:
                opened = await replicas.must(
                    n, "POST", "/v1/sessions", {"scenario": "acme-trend", "label": f"load-{n}"}
                )
                assert opened.status_code == 200, opened.text
                sid = opened.json()["sessionId"]
                roots: list[str] = []
                prev = ""
                for step in range(submits):
                    if step == 0 and kill is not None:  # the opening root, in case of doubt
                        frame = await replicas.must(n, "GET", f"/v1/sessions/{sid}/frame")
                        prev = frame.json()["frameRoot"]
                    seq, root, prev = await submit(
                        replicas, n + step, sid, step + 1, source=_source(n, step), prev=prev
                    )
                    assert seq == step + 1, (sid, seq, step)  # none lost, none forked
                    roots.append(root)
                    run.tally["submits"] += 1
                    if run.tally["submits"] == kill_at and kill is not None:
                        kill()
                closed = await replicas.must(n + 1, "POST", f"/v1/sessions/{sid}/close")
                assert closed.status_code == 200, closed.text
                assert closed.json()["pentads"] == roots, "a pentad was lost or reordered"
                run.tally["pentads"] += len(roots)
                # Spot-check that the pentads are stored artifacts (first and last).
                for root in {roots[0], roots[-1]}:
                    got = await replicas.must(n + 2, "GET", f"/v1/artifacts/{root}")
                    assert got.status_code == 200, got.text
                    assert got.json()["root"] == root
                    run.tally["artifacts"] += 1
                grade = await _grade(replicas, n + 3, sid)
                verified = await replicas.must(n + 4, "POST", "/v1/verify", {"grade": grade})
                assert verified.status_code == 200, verified.text
                assert verified.json()["ok"] is True, verified.json()
                run.roots[sid] = (roots, grade["head"], grade["metrics"])
                run.tally["verified"] += 1
                run.tally["sessions"] += 1
        finally:
            run.failovers += replicas.failovers
            await replicas.aclose()

    async with anyio.create_task_group() as tg:
        for _ in range(CLIENTS):
            tg.start_soon(client_loop)
    return run


def _rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def _figures(run: _Run, elapsed: float, sessions: int, submits: int) -> str:
    ordered = sorted(run.latencies)
    p99 = ordered[int(len(ordered) * 0.99) - 1]
    return (
        f"{sessions} sessions x {submits} submits, {CLIENTS} clients: "
        f"{run.tally['submits']} submits in {elapsed:.1f}s = "
        f"{run.tally['submits'] / elapsed:.0f} submits/s "
        f"(end to end incl. open/close/grade/verify); submit p50 "
        f"{statistics.median(ordered) * 1000:.1f} ms, p99 {p99 * 1000:.1f} ms"
    )


def _accounted(run: _Run, sessions: int, submits: int) -> None:
    assert run.tally["sessions"] == sessions
    assert run.tally["submits"] == run.tally["pentads"] == sessions * submits
    assert run.tally["verified"] == sessions


def _load(rs: ModuleType, tmp_path: Path, sessions: int, submits: int) -> None:
    home = tmp_path / "home"
    home.mkdir()
    token = rs.issue_token(home, "loader")
    with rs.door_process(home) as door:
        rss_before = _rss_kib(door.proc.pid)
        started = time.perf_counter()
        run = anyio.run(_drive, [door.base], token, sessions, submits)
        elapsed = time.perf_counter() - started
        rss_after = _rss_kib(door.proc.pid)
        assert door.proc.poll() is None, "the door died under load"
    log = door.stderr_path.read_text(errors="replace")
    assert "Traceback" not in log, log[-2000:]
    _accounted(run, sessions, submits)
    assert rs.integrity(home / "kestrel.db") == "ok"
    print(
        f"\nload: {_figures(run, elapsed, sessions, submits)}; "
        f"door RSS {rss_before // 1024} -> {rss_after // 1024} MiB"
    )


def test_load_bounded(rs: ModuleType, tmp_path: Path) -> None:
    _load(rs, tmp_path, sessions=64, submits=20)


@pytest.mark.slow
def test_load_1000_sessions(rs: ModuleType, tmp_path: Path) -> None:
    _load(rs, tmp_path, sessions=1000, submits=50)


def _reference(
    tmp_path: Path, sessions: int, submits: int, principal: str = "loader"
) -> dict[str, tuple[list[str], str, Any]]:
    """Each session's pentad roots, head frame root and grade metrics when the same sources
    run on a single SQLite-backed runtime (in this process)."""
    runtime = Runtime(tmp_path / "reference")
    roots: dict[str, tuple[list[str], str, Any]] = {}
    try:
        for n in range(sessions):
            sid = runtime.open_session(principal, "acme-trend", f"load-{n}").session_id
            assert sid is not None
            pentads = [
                runtime.submit(principal, sid, _source(n, s)).model().pentad.root
                for s in range(submits)
            ]
            grade = runtime.grade(principal, sid, budget=600)
            assert isinstance(grade, GradeResult)
            roots[sid] = (pentads, grade.head, grade.metrics.to_json())
    finally:
        runtime.shutdown()
    return roots


def _load_replicas(
    rs: ModuleType, tmp_path: Path, dsn: str, *, sessions: int, submits: int, replicas: int = 3
) -> None:
    """``replicas`` doors on one PostgreSQL store (each with its own home, as on its own
    machine); each session's calls spread over them; one SIGKILLed a third of the way in."""
    homes = [tmp_path / f"replica-{i}" for i in range(replicas)]
    token = rs.issue_token(tmp_path / "operator", "loader", store=dsn)
    doors = []
    try:
        for home in homes:
            home.mkdir()
            doors.append(rs.start_door(home, rs.free_port(), store=dsn))
        victim = doors[-1]
        started = time.perf_counter()
        run = anyio.run(
            _drive, [d.base for d in doors], token, sessions, submits, lambda: rs.kill(victim.proc)
        )
        elapsed = time.perf_counter() - started
        for door in doors[:-1]:
            assert door.proc.poll() is None, "a surviving replica died under load"
    finally:
        for door in doors:
            rs.kill(door.proc)
    for door in doors[:-1]:
        assert "Traceback" not in door.log(), door.log()[-2000:]
    assert victim.proc.returncode == -9  # it was SIGKILLed mid-run, not stopped
    _accounted(run, sessions, submits)
    assert run.failovers >= 1  # calls did reach the victim and were failed over
    # same sources, same roots: the door trades as the token's pseudonym in that store
    loader = rs.pseudonym(tmp_path / "operator", "loader", store=dsn)
    assert run.roots == _reference(tmp_path, sessions, submits, loader)
    print(
        f"\nload on {replicas} replicas (one PostgreSQL), one SIGKILLed mid-run: "
        f"{_figures(run, elapsed, sessions, submits)}; {run.failovers} calls failed over, "
        f"{run.ambiguous} submits committed by the victim before it could answer"
    )


def test_load_three_replicas_one_killed(rs: ModuleType, tmp_path: Path, postgres_dsn: str) -> None:
    _load_replicas(rs, tmp_path, postgres_dsn, sessions=64, submits=20)


@pytest.mark.slow
def test_load_three_replicas_one_killed_1000_sessions(
    rs: ModuleType, tmp_path: Path, postgres_dsn: str
) -> None:
    _load_replicas(rs, tmp_path, postgres_dsn, sessions=1000, submits=50)


def _memory_per_session(tmp_path: Path, count: int) -> float:
    """Bytes the runtime holds per open session (after its first submit), tape excluded."""
    runtime = Runtime(tmp_path / "mem")
    try:
        warm = runtime.open_session("mem", "acme-trend", "warm", None)
        runtime.submit("mem", str(warm.session_id), "buy 1 ACME\nadvance").model()  # loads the tape
        gc.collect()
        tracemalloc.start()
        base, _ = tracemalloc.get_traced_memory()
        for i in range(count):
            opened = runtime.open_session("mem", "acme-trend", f"m{i}", None)
            runtime.submit("mem", str(opened.session_id), "buy 1 ACME\nadvance").model()
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


def _traced_after(runtime: Runtime, start: int, stop: int) -> int:
    """Open sessions ``start``..``stop`` (one submit each); bytes traced afterwards, less
    what the process-wide memo of JCS-quoted strings holds: it remembers every session
    id it quotes, up to 4,096 strings, then starts again empty, so what it holds at a
    given moment depends on how many strings earlier tests of the process quoted (a
    sawtooth of up to ≈ 650 KB); it is emptied before the count, whatever it held."""
    for i in range(start, stop):
        opened = runtime.open_session("mem", "acme-trend", f"b{i}", None)
        runtime.submit("mem", str(opened.session_id), "buy 1 ACME\nadvance").model()
    pentads._QUOTED.clear()
    gc.collect()
    return tracemalloc.get_traced_memory()[0]


def test_memory_stays_flat_past_the_live_session_limit(tmp_path: Path) -> None:
    """With at most 100 engines live, 3,000 sessions hold what 600 did (within 10 %; by
    600 every bounded cache is as full as it gets)."""
    runtime = Runtime(tmp_path / "bounded", max_live_sessions=100)
    try:
        tracemalloc.start()
        at_600 = _traced_after(runtime, 0, 600)
        at_3000 = _traced_after(runtime, 600, 3000)
        tracemalloc.stop()
        assert runtime.live_sessions == 100
    finally:
        runtime.shutdown()
    print(f"\ntraced memory: {at_600 // 1024} KiB at 600 sessions, {at_3000 // 1024} KiB at 3000")
    assert at_3000 <= at_600 * 1.10


async def _open_many(base: str, token: str, start: int, stop: int) -> None:
    queue = iter(range(start, stop))

    async def client() -> None:
        async with httpx.AsyncClient(
            base_url=base, headers={"Authorization": f"Bearer {token}"}, timeout=120
        ) as http:
            for n in queue:
                opened = await http.post(
                    "/v1/sessions", json={"scenario": "acme-trend", "label": f"m{n}"}
                )
                assert opened.status_code == 200, opened.text
                sid = opened.json()["sessionId"]
                done = await http.post(
                    f"/v1/sessions/{sid}/submit", json={"source": "buy 1 ACME\nadvance"}
                )
                assert done.status_code == 200, done.text

    async with anyio.create_task_group() as tg:
        for _ in range(CLIENTS // 2):
            tg.start_soon(client)


@pytest.mark.slow
@pytest.mark.timeout(3600)  # 40,000 requests
def test_door_rss_is_flat_past_max_live_sessions(rs: ModuleType, tmp_path: Path) -> None:
    """A door with ``--max-live-sessions 1000`` that opened 20,000 sessions has an RSS
    within 10 % of what it had at 1,000 (the cache full, every engine since evicted)."""
    home = tmp_path / "home"
    home.mkdir()
    token = rs.issue_token(home, "mem")
    with rs.door_process(home, "--max-live-sessions", "1000") as door:
        anyio.run(_open_many, door.base, token, 0, 1000)
        at_1000 = _rss_kib(door.proc.pid)
        anyio.run(_open_many, door.base, token, 1000, 20_000)
        at_20000 = _rss_kib(door.proc.pid)
        assert door.proc.poll() is None
    print(f"\ndoor RSS: {at_1000 // 1024} MiB at 1,000 sessions, {at_20000 // 1024} MiB at 20,000")
    assert at_20000 <= at_1000 * 1.10
