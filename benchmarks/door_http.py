"""tools/call throughput and latency: the Kestrel door vs the official SDK's MCPServer.

    uv run python benchmarks/door_http.py [--clients 32] [--seconds 5] [--json out.json]

Both servers run on uvicorn (one process each, started here, loopback only) and serve
the same tool, ``kestrel_catalog``, which asks the same runtime for its catalog. The
door does its full per-call work (bearer lookup, scope guard, audit row), inside
``kestrel-door serve``'s connection limits; the SDK server runs stateless with JSON
responses and no auth. One load generator drives both in the same run with N
concurrent clients, each posting a JSON-RPC ``tools/call`` and waiting for its answer;
requests/s, p50 and p99 latency and the door/SDK ratio are printed, and (where
``/proc`` tells it) each server process's CPU per request over the measured window,
which the machine's other work moves less than the rates. The run is bounded in time
and count and stops by itself.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from functools import partial
from pathlib import Path
from typing import Any

import anyio
import httpx

HERE = Path(__file__).resolve()
CALL = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "tools/call",
    "params": {"name": "kestrel_catalog", "arguments": {}},
}
HEADERS = {
    "Connection": "keep-alive",
    "Accept": "application/json, text/event-stream",
    "Content-Type": "application/json",
    "MCP-Protocol-Version": "2025-11-25",
}


def _serve_door(port: int, home: Path) -> None:
    import uvicorn
    from kestrel_door import (
        AuditLog,
        ConnectionLimits,
        DoorConfig,
        DoorStore,
        IssuedTokens,
        create_door_app,
        limit_connections,
    )
    from kestrel_sdk import local_transport

    owner: Any = local_transport(home=home)
    store = DoorStore(home / "door.db")
    app = create_door_app(
        DoorConfig(base_url=f"http://127.0.0.1:{port}"),
        transport_for=lambda p: local_transport(principal=p, runtime=owner.runtime),
        grant_verifiers=[IssuedTokens(store)],
        audit=AuditLog(store),
    )
    # As `kestrel-door serve` runs it: inside its connection limits (their defaults).
    app, http = limit_connections(app, ConnectionLimits())
    owner.runtime.catalog()  # serve loads it to print its catalog line
    gc.freeze()  # and keeps what start-up built out of the collector's sight
    uvicorn.run(app, http=http, host="127.0.0.1", port=port, log_level="warning", access_log=False)


def _serve_sdk(port: int, home: Path) -> None:
    import uvicorn
    from kestrel_sdk import create_sdk, local_transport
    from mcp.server.mcpserver import MCPServer

    sdk = create_sdk(local_transport(home=home, principal="bench"))
    server = MCPServer("kestrel-sdk-baseline")

    @server.tool(name="kestrel_catalog", description="The scenario catalog.")
    async def kestrel_catalog() -> dict[str, Any]:
        return (await sdk.catalog()).to_json()

    app = server.streamable_http_app(json_response=True, stateless_http=True)
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", access_log=False)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _start(kind: str, home: Path) -> tuple[subprocess.Popen[bytes], str]:
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, str(HERE), "--serve", kind, "--port", str(port), "--home", str(home)],
        stdout=subprocess.DEVNULL,
        stderr=(home / f"{kind}.log").open("wb"),
    )
    url = f"http://127.0.0.1:{port}/mcp"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return proc, url
        except OSError:
            if proc.poll() is not None:
                log = (home / f"{kind}.log").read_text(errors="replace")
                raise RuntimeError(f"{kind} server died:\n{log}") from None
            time.sleep(0.05)
    proc.kill()
    raise RuntimeError(f"{kind} server did not start")


class _Conn:
    """One keep-alive HTTP/1.1 connection speaking just enough to post and read JSON.

    A hand-rolled client keeps the load generator's own cost per request small, so on a
    small machine the numbers measure the servers rather than the client library.
    """

    def __init__(self, stream: Any) -> None:
        self.stream = stream
        self.buf = b""

    async def _fill(self) -> None:
        chunk = await self.stream.receive(65536)
        if not chunk:
            raise ConnectionError("server closed the connection")
        self.buf += chunk

    async def roundtrip(self, request: bytes) -> tuple[int, bytes]:
        await self.stream.send(request)
        while b"\r\n\r\n" not in self.buf:
            await self._fill()
        head, _, self.buf = self.buf.partition(b"\r\n\r\n")
        lines = head.split(b"\r\n")
        status = int(lines[0].split()[1])
        length = 0
        for line in lines[1:]:
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value)
            elif name.strip().lower() == b"transfer-encoding":
                raise RuntimeError("chunked responses are not expected here")
        while len(self.buf) < length:
            await self._fill()
        body, self.buf = self.buf[:length], self.buf[length:]
        return status, body


def _request_bytes(url: str, headers: dict[str, str]) -> tuple[str, int, bytes]:
    parsed = httpx.URL(url)
    body = json.dumps(CALL).encode()
    lines = [f"POST {parsed.raw_path.decode()} HTTP/1.1", f"Host: {parsed.host}:{parsed.port}"]
    lines += [f"{k}: {v}" for k, v in headers.items()]
    lines.append(f"Content-Length: {len(body)}")
    return parsed.host, int(parsed.port or 80), ("\r\n".join(lines) + "\r\n\r\n").encode() + body


def _ok(status: int, body: bytes) -> bool:
    if status != 200:
        return False
    data = json.loads(body)
    return (
        data["result"]["isError"] is False
        and "kestrel.catalog" in data["result"]["content"][0]["text"]
    )


def _cpu_s(pid: int) -> float | None:
    """The process's user and system CPU seconds so far (Linux's ``/proc``; else ``None``)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def _load(
    url: str, headers: dict[str, str], clients: int, seconds: float, cap: int, *, pid: int
) -> dict[str, Any]:
    latencies: list[float] = []
    errors = 0
    host, port, request = _request_bytes(url, headers)
    conns = [_Conn(await anyio.connect_tcp(host, port)) for _ in range(clients)]
    for _ in range(min(100, cap)):  # warm-up, not measured
        status, body = await conns[0].roundtrip(request)
        if not _ok(status, body):
            raise RuntimeError(f"{url} answered {status}: {body[:300]!r}")
    stop = time.perf_counter() + seconds

    async def worker(conn: _Conn) -> None:
        nonlocal errors
        while time.perf_counter() < stop and len(latencies) < cap:
            t0 = time.perf_counter()
            status, body = await conn.roundtrip(request)
            latencies.append(time.perf_counter() - t0)
            errors += 0 if _ok(status, body) else 1

    start, cpu_start = time.perf_counter(), _cpu_s(pid)
    async with anyio.create_task_group() as tg:
        for conn in conns:
            tg.start_soon(worker, conn)
    elapsed, cpu_end = time.perf_counter() - start, _cpu_s(pid)
    for conn in conns:
        await conn.stream.aclose()
    latencies.sort()
    n = len(latencies)
    return {
        "requests": n,
        "errors": errors,
        "rps": n / elapsed,
        "p50_ms": 1000 * latencies[n // 2],
        "p99_ms": 1000 * latencies[min(n - 1, int(n * 0.99))],
        "mean_ms": 1000 * statistics.fmean(latencies),
        "server_cpu_us": None
        if cpu_start is None or cpu_end is None
        else 1e6 * (cpu_end - cpu_start) / n,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--max-requests", type=int, default=200_000)
    parser.add_argument("--json", dest="json_out", default=None)
    parser.add_argument("--serve", choices=["door", "sdk"], help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--home", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        (_serve_door if args.serve == "door" else _serve_sdk)(args.port, Path(args.home))
        return 0

    home = Path(tempfile.mkdtemp(prefix="kestrel-bench-"))
    os.environ["KESTREL_HOME"] = str(home)
    from kestrel_door import DoorStore, IssuedTokens

    store = DoorStore(home / "door.db")
    _, token = IssuedTokens(store).issue("bench", ["kestrel:read"])
    store.close()

    results: dict[str, Any] = {"clients": args.clients, "seconds": args.seconds}
    for kind in ("sdk", "door"):
        server_home = home / kind if kind == "sdk" else home
        server_home.mkdir(parents=True, exist_ok=True)
        proc, url = _start(kind, server_home)
        try:
            headers = dict(HEADERS)
            if kind == "door":
                headers["Authorization"] = f"Bearer {token}"
            load = partial(_load, pid=proc.pid)
            results[kind] = anyio.run(
                load, url, headers, args.clients, args.seconds, args.max_requests
            )
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=5)
    results["ratio_rps"] = results["door"]["rps"] / results["sdk"]["rps"]
    print(
        f"tools/call kestrel_catalog, {args.clients} concurrent clients, {args.seconds:.0f}s each"
    )
    print(
        f"{'server':<8} {'req/s':>9} {'p50 ms':>8} {'p99 ms':>8} {'errors':>7} {'n':>8}"
        f" {'CPU us/req':>11}"
    )
    for kind in ("door", "sdk"):
        r = results[kind]
        cpu = "" if r["server_cpu_us"] is None else f"{r['server_cpu_us']:.0f}"
        print(
            f"{kind:<8} {r['rps']:>9.0f} {r['p50_ms']:>8.2f} {r['p99_ms']:>8.2f}"
            f" {r['errors']:>7} {r['requests']:>8} {cpu:>11}"
        )
    print(f"door/sdk throughput ratio: {results['ratio_rps']:.2f}x")
    print(f"door p99 / sdk p99: {results['door']['p99_ms'] / results['sdk']['p99_ms']:.2f}")
    if results["door"]["server_cpu_us"] and results["sdk"]["server_cpu_us"]:
        ratio = results["sdk"]["server_cpu_us"] / results["door"]["server_cpu_us"]
        print(f"sdk/door server CPU per request: {ratio:.2f}x")
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
