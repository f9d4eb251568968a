"""Submits through the door: SQLite (one process) vs PostgreSQL (one and two replicas).

    uv run python benchmarks/door_store.py [--clients 64] [--sessions 128] [--submits 20]

Each setup runs ``kestrel-door serve`` processes (loopback only) and the same load: N
concurrent clients, each opening sessions and submitting to them; with two replicas
each session's calls alternate between them (as behind a round-robin balancer), so
every submit lands on a replica whose cached engine is one step behind and catches up
from the journal first. The PostgreSQL cluster is a throwaway one started here
(``tests/postgres.py``: initdb in a temporary directory; default durability settings,
so a commit is flushed to its WAL). Submits/s (over the submit phase) and the submit
latency p50/p99 are printed for each, with the ratio to SQLite. Bounded in count; it
stops by itself.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
import httpx

HERE = Path(__file__).resolve()
sys.path.insert(0, str(HERE.parents[1]))  # the tests' helpers (loopback, postgres)

from tests import postgres  # noqa: E402
from tests.loopback import free_port  # noqa: E402
from tests.reliability import support  # noqa: E402


def _source(session: int, step: int) -> str:
    side = "buy" if (session + step) % 3 else "sell"
    return f"{side} {1 + (session * 7 + step) % 5} ACME\nadvance"


def _clients(bases: list[str], token: str) -> list[httpx.AsyncClient]:
    """One keep-alive connection to each replica (as one agent would hold)."""
    headers = {"Authorization": f"Bearer {token}"}
    limits = httpx.Limits(max_connections=1)
    return [
        httpx.AsyncClient(base_url=b, headers=headers, timeout=120, limits=limits) for b in bases
    ]


async def _load(
    bases: list[str], token: str, clients: int, sessions: int, submits: int
) -> tuple[float, list[float]]:
    """(submit-phase seconds, submit latencies): open every session, then submit."""
    sids: dict[int, str] = {}
    opening = iter(range(sessions))

    async def opener() -> None:
        pool = _clients(bases, token)
        for n in opening:
            opened = await pool[n % len(pool)].post(
                "/v1/sessions", json={"scenario": "acme-trend", "label": f"b{n}"}
            )
            opened.raise_for_status()
            sids[n] = opened.json()["sessionId"]
        for c in pool:
            await c.aclose()

    async with anyio.create_task_group() as tg:
        for _ in range(clients):
            tg.start_soon(opener)
    latencies: list[float] = []
    queue = iter(range(sessions))

    async def client() -> None:
        pool = _clients(bases, token)  # fresh connections: none idle past keep-alive
        for n in queue:
            for step in range(submits):
                http = pool[(n + step) % len(pool)]
                t0 = time.perf_counter()
                while True:
                    try:
                        response = await http.post(
                            f"/v1/sessions/{sids[n]}/submit", json={"source": _source(n, step)}
                        )
                        break
                    except httpx.TransportError:  # a keep-alive closed under a slow call
                        frame = await http.get(f"/v1/sessions/{sids[n]}/frame")
                        if frame.json()["frame"]["seq"] == step + 1:  # it was applied
                            response = None
                            break
                latencies.append(time.perf_counter() - t0)
                if response is not None:
                    assert response.status_code == 200, response.text
                    assert response.json()["pentad"]["seq"] == step + 1
        for c in pool:
            await c.aclose()

    started = time.perf_counter()
    async with anyio.create_task_group() as tg:
        for _ in range(clients):
            tg.start_soon(client)
    elapsed = time.perf_counter() - started
    return elapsed, latencies


def _run(
    name: str, store: str | None, replicas: int, root: Path, args: argparse.Namespace
) -> dict[str, Any]:
    homes = [root / name / f"r{i}" for i in range(replicas)]
    for home in homes:
        home.mkdir(parents=True)
    token = support.issue_token(homes[0], "bench", store=store)
    doors = [support.start_door(home, free_port(), store=store) for home in homes]
    try:
        elapsed, latencies = anyio.run(
            _load, [d.base for d in doors], token, args.clients, args.sessions, args.submits
        )
    finally:
        for door in doors:
            support.kill(door.proc)
    ordered = sorted(latencies)
    return {
        "name": name,
        "rate": len(latencies) / elapsed,
        "p50": statistics.median(ordered) * 1000,
        "p99": ordered[int(len(ordered) * 0.99) - 1] * 1000,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=64)
    parser.add_argument("--sessions", type=int, default=128)
    parser.add_argument("--submits", type=int, default=20)
    args = parser.parse_args()
    why = postgres.missing()
    if why is not None:
        print(f"door_store: {why}", file=sys.stderr)
        return 2
    results = []
    with (
        tempfile.TemporaryDirectory(prefix="kestrel-bench-") as tmp,
        postgres.cluster(fsync="on", full_page_writes="on") as cluster,
    ):
        root = Path(tmp)
        results.append(_run("sqlite, 1 process", None, 1, root, args))
        results.append(_run("postgresql, 1 replica", cluster.database("one"), 1, root, args))
        results.append(_run("postgresql, 2 replicas", cluster.database("two"), 2, root, args))
    print(
        f"door_store: {args.clients} clients, {args.sessions} sessions x {args.submits} submits "
        f"each ({os.cpu_count()} cores, everything on this machine)"
    )
    base = results[0]["rate"]
    for r in results:
        print(
            f"  {r['name']:<24} {r['rate']:7.0f} submits/s  p50 {r['p50']:7.1f} ms  "
            f"p99 {r['p99']:7.1f} ms  ({r['rate'] / base:.2f}x sqlite)"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
