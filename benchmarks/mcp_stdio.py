"""Round trips per second of ``kestrel_session_submit`` (``advance``) over stdio.

Kestrel's MCP face (``python -m kestrel_mcp``) against the official SDK's
``MCPServer`` exposing an equivalent tool (same name, same arguments, the same SDK
call over the same ``local_transport``, the submit response as its structured
result), both driven in the same run by the same raw JSON-RPC pipe client: one
request line out, one response line back, sequentially. Both servers stay up and are
driven in interleaved blocks so that load from the rest of the machine hits both
alike. Prints both rates, the ratio, and the median of the per-block ratios (less
sensitive to bursts of load than the totals); where Linux's ``/proc`` shows it, also
each server process's CPU time per round trip (what the face costs, whatever else
the machine is doing) and its ratio.

A third contender, the *floor*, is a server that does nothing: it answers every submit
with Kestrel's own response bytes (captured during the warm-up, the id replaced) and
polls stdin like ``kestrel-mcp`` (for up to a millisecond after a response, then it
sleeps: one that never slept held a core through the other servers' blocks). No server
can be faster on this pipe and this client: its rate bounds what any server reaches on
the machine at that moment (it moves by a third from one minute to the next on a shared
virtual machine), and the rest of a Kestrel round trip is Kestrel's. Part of that rest
is not Kestrel's work but its price: a server that answers within a few microseconds
answers before the client's ``readline`` has gone to sleep, while one that works for
tens of microseconds finds the client's CPU halted, and the write that wakes it, and
the wake-up, each cost microseconds more on a virtual machine.

``--step-floor`` adds a fourth contender to the same blocks: the floor that also runs, for
each submit, the one thing no face can leave out, the runtime's step and its text
(``Runtime.submit(...).text`` over ``local_transport()``'s store, the SQLite commit
included), and answers with the canned bytes. Its rate bounds what any MCP face over this
runtime and store reaches here; the rest of kestrel-mcp's round trip is the face's.

``--spin-us N`` is passed to ``kestrel-mcp`` (how long it polls for the next request
before sleeping; ``0`` measures it sleeping between requests, as it did before it
polled, so that its CPU is its work).

``--compare DIR`` (repeatable) adds the ``kestrel-mcp`` of another checkout (``DIR``, with
its own ``.venv``, e.g. a worktree of the commit before a change) to the same interleaved
blocks: each one's median block time and speed against this checkout's are printed, the
same load having hit all of them (two checkouts run one after the other on a shared
machine differ by more than most changes).

    uv run python benchmarks/mcp_stdio.py [--requests 2000] [--warmup 200] [--scenario minute-200k]
        [--spin-us N] [--compare DIR ...] [--step-floor]
"""

from __future__ import annotations

import argparse
import json
import os
import select
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

FLOOR_SPIN_S = 0.001
"""How long the floor polls for the next request before it sleeps (kestrel-mcp's default)."""

INIT = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "bench", "version": "1"},
    },
}


class PipeClient:
    """A raw line-oriented JSON-RPC client on a server subprocess."""

    def __init__(self, argv: list[str], env: dict[str, str]) -> None:
        self.process = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env
        )
        assert self.process.stdin is not None
        assert self.process.stdout is not None
        self.stdin = self.process.stdin
        self.stdout = self.process.stdout
        self.next_id = 1

    def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None:
            message["params"] = params
        self.next_id += 1
        self.stdin.write(json.dumps(message).encode() + b"\n")
        self.stdin.flush()
        while True:
            line = self.stdout.readline()
            if not line:
                raise RuntimeError(f"server closed the pipe during {method}")
            response: dict[str, Any] = json.loads(line)
            if response.get("id") == message["id"]:
                if "error" in response:
                    raise RuntimeError(f"{method} failed: {response['error']}")
                return response

    def notify(self, method: str) -> None:
        self.stdin.write(json.dumps({"jsonrpc": "2.0", "method": method}).encode() + b"\n")
        self.stdin.flush()

    def close(self) -> None:
        self.stdin.close()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()


def process_cpu(pid: int) -> float | None:
    """Seconds of CPU the process has run, all its threads (Linux), else ``None``."""
    try:
        total = 0
        for thread in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{thread}/schedstat") as stat:
                total += int(stat.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None
    return total / 1e9


class Contender:
    """One server under test: its pipe, its session, and the time spent on its round trips."""

    def __init__(self, name: str, argv: list[str], home: Path, scenario: str) -> None:
        env = {**os.environ, "KESTREL_HOME": str(home), "KESTREL_SECRET_STORE": "file"}
        self.name = name
        self.client = PipeClient(argv, env)
        self.client.stdin.write(json.dumps(INIT).encode() + b"\n")
        self.client.stdin.flush()
        json.loads(self.client.stdout.readline())
        self.client.notify("notifications/initialized")
        opened = self.client.request(
            "tools/call", {"name": "kestrel_session_open", "arguments": {"scenario": scenario}}
        )
        session_id = opened["result"]["structuredContent"]["sessionId"]
        self.call = {
            "name": "kestrel_session_submit",
            "arguments": {"sessionId": session_id, "source": "advance"},
        }
        self.elapsed = 0.0
        self.cpu: float | None = 0.0
        self.count = 0
        self.last: dict[str, Any] = {}

    def run(self, requests: int, timed: bool = True) -> float:
        pid = self.client.process.pid
        cpu_before = process_cpu(pid)
        started = time.perf_counter()
        for _ in range(requests):
            self.last = self.client.request("tools/call", self.call)
            result = self.last["result"]
            if result.get("isError"):
                raise RuntimeError(f"{self.name}: submit refused: {result['structuredContent']}")
        spent = time.perf_counter() - started
        cpu_after = process_cpu(pid)
        if timed:
            self.elapsed += spent
            self.count += requests
            if self.cpu is not None and cpu_before is not None and cpu_after is not None:
                self.cpu += cpu_after - cpu_before
            else:
                self.cpu = None
        return spent

    @property
    def rate(self) -> float:
        return self.count / self.elapsed

    @property
    def cpu_per_call(self) -> float | None:
        """Server CPU seconds per round trip, when the platform shows it."""
        return None if not self.cpu else self.cpu / self.count


def serve_baseline() -> None:
    """The official SDK's ``MCPServer`` with an equivalent ``kestrel_session_submit`` tool."""
    from kestrel_sdk import create_sdk, local_transport
    from mcp.server.mcpserver import MCPServer

    sdk = create_sdk(local_transport())
    server = MCPServer("kestrel-baseline", version="0.0.0")

    @server.tool()
    async def kestrel_session_open(scenario: str) -> dict[str, Any]:
        """Open a session."""
        gated = await sdk.open_session(scenario)
        assert gated.session is not None
        return {"gated": False, "sessionId": gated.session.id}

    @server.tool()
    async def kestrel_session_submit(sessionId: str, source: str) -> dict[str, Any]:
        """Apply Kestrel source to a session."""
        return (await sdk.session(sessionId).submit(source)).to_json()

    server.run()


def serve_floor(canned: Path, step: bool = False) -> None:
    """Answer each request at once: a submit with ``canned`` (a response line whose id is
    0), anything else with a session id; poll stdin after a response for up to
    ``FLOOR_SPIN_S`` (kestrel-mcp's default spin) before sleeping until the next one.
    ``step``: open a real session and run each submit's step and text on the runtime
    first (``Runtime.submit(...).text``), as every face must.

    A floor that never slept would hold a core while the other servers' blocks run: on
    a small shared machine that is a core taken from them and their client."""
    head, tail = canned.read_bytes().split(b'"id":0', 1)
    opened = b'"result":{"structuredContent":{"sessionId":"floor"}}}\n'
    runtime = None
    if step:
        from kestrel_sdk import local_transport

        runtime = local_transport().runtime  # type: ignore[attr-defined]
    poller = select.poll()
    poller.register(0, select.POLLIN)
    pending = b""
    while True:
        deadline = time.perf_counter() + FLOOR_SPIN_S
        while not poller.poll(0):
            if time.perf_counter() >= deadline:
                poller.poll()  # asleep until the next request
                break
        chunk = os.read(0, 1 << 16)
        if not chunk:
            return
        pending += chunk
        while b"\n" in pending:
            line, pending = pending.split(b"\n", 1)
            message = json.loads(line)
            if "id" not in message:
                continue
            request_id = json.dumps(message["id"]).encode()
            params = message.get("params", {})
            if params.get("name") == "kestrel_session_open":
                if runtime is not None:
                    scenario = params["arguments"]["scenario"]
                    session = runtime.open_session("local", scenario).session_id
                    opened = b'"result":{"structuredContent":{"sessionId":%s}}}\n' % (
                        json.dumps(session).encode()
                    )
                os.write(1, b'{"jsonrpc":"2.0","id":' + request_id + b"," + opened)
            else:
                if runtime is not None and params.get("name") == "kestrel_session_submit":
                    arguments = params["arguments"]
                    answered = runtime.submit("local", arguments["sessionId"], arguments["source"])
                    if not answered.text:
                        raise RuntimeError("the runtime wrote no response")
                os.write(1, head + b'"id":' + request_id + tail)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--warmup", type=int, default=200)
    parser.add_argument("--scenario", default="minute-200k")
    parser.add_argument("--spin-us", type=int, default=None, help="kestrel-mcp's --spin-us")
    parser.add_argument(
        "--compare",
        type=Path,
        action="append",
        default=[],
        help="another checkout (with its .venv) whose kestrel-mcp runs in the same blocks",
    )
    parser.add_argument(
        "--step-floor",
        action="store_true",
        help="add the floor that also runs the runtime's step (what any face over it reaches)",
    )
    parser.add_argument("--serve-baseline", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--serve-floor", type=Path, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--with-step", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_baseline:
        serve_baseline()
        return
    if args.serve_floor is not None:
        serve_floor(args.serve_floor, step=args.with_step)
        return
    block_ratios: list[float] = []
    floor_shares: list[float] = []
    step_ratios: list[float] = []
    step_shares: list[float] = []
    stepped: Contender | None = None
    with tempfile.TemporaryDirectory(prefix="kestrel-bench-") as tmp:
        spin = [] if args.spin_us is None else ["--spin-us", str(args.spin_us)]
        kestrel = Contender(
            "kestrel-mcp",
            [sys.executable, "-m", "kestrel_mcp", *spin],
            Path(tmp) / "k",
            args.scenario,
        )
        official = Contender(
            "MCPServer",
            [sys.executable, __file__, "--serve-baseline"],
            Path(tmp) / "b",
            args.scenario,
        )
        others = [
            Contender(
                str(checkout),
                [str(checkout / ".venv" / "bin" / "python"), "-m", "kestrel_mcp", *spin],
                Path(tmp) / f"c{number}",
                args.scenario,
            )
            for number, checkout in enumerate(args.compare)
        ]
        contenders = [kestrel, official, *others]
        compared: dict[str, list[float]] = {other.name: [] for other in others}
        try:
            for contender in contenders:
                contender.run(args.warmup, timed=False)
            canned = Path(tmp) / "canned.json"
            canned.write_bytes(
                json.dumps({**kestrel.last, "id": 0}, separators=(",", ":")).encode() + b"\n"
            )
            floor = Contender(
                "floor",
                [sys.executable, __file__, "--serve-floor", str(canned)],
                Path(tmp) / "f",
                args.scenario,
            )
            contenders.append(floor)
            floor.run(args.warmup, timed=False)
            if args.step_floor:
                stepped = Contender(
                    "step floor",
                    [sys.executable, __file__, "--serve-floor", str(canned), "--with-step"],
                    Path(tmp) / "s",
                    args.scenario,
                )
                contenders.append(stepped)
                stepped.run(args.warmup, timed=False)
            # Interleaved blocks, so load from the rest of the machine hits all alike.
            block = max(1, args.requests // 20)
            for _ in range(max(1, args.requests // block)):
                ours = kestrel.run(block)
                theirs = official.run(block)
                least = floor.run(block)
                block_ratios.append(theirs / ours)
                floor_shares.append(least / ours)
                for other in others:
                    compared[other.name].append(other.run(block) / ours)
                if stepped is not None:
                    least_step = stepped.run(block)
                    step_ratios.append(theirs / least_step)
                    step_shares.append(least_step / ours)
        finally:
            for contender in contenders:
                contender.client.close()
    polling = "default" if args.spin_us is None else f"{args.spin_us}"
    what = f"kestrel_session_submit 'advance', --spin-us {polling}"
    print(f"kestrel-mcp    {kestrel.rate:10.1f} round trips/s  ({what})")
    print(f"mcp MCPServer  {official.rate:10.1f} round trips/s  (equivalent tool, same SDK call)")
    print(f"ratio          {kestrel.rate / official.rate:10.2f}x  ({kestrel.count} requests each)")
    median = statistics.median(block_ratios)
    print(f"median ratio   {median:10.2f}x  (over {len(block_ratios)} interleaved blocks)")
    share = statistics.median(floor_shares)
    print(f"floor          {floor.rate:10.1f} round trips/s  (answering at once, same bytes)")
    print(f"of the floor   {share:10.2f}    (kestrel-mcp's rate / the floor's, median of blocks)")
    if stepped is not None:
        ratio = statistics.median(step_ratios)
        print(f"step floor     {stepped.rate:10.1f} round trips/s  (the floor, and the step)")
        print(f"  its ratio    {ratio:10.2f}x  (to MCPServer, median of blocks: any face's bound)")
        share = statistics.median(step_shares)
        print(f"  of it        {share:10.2f}    (kestrel-mcp's rate / the step floor's, median)")
        if stepped.cpu_per_call is not None:
            print(f"  server CPU   {stepped.cpu_per_call * 1e6:10.1f} us per round trip")
    ours_cpu, theirs_cpu = kestrel.cpu_per_call, official.cpu_per_call
    if ours_cpu is not None and theirs_cpu is not None:
        print(f"kestrel-mcp    {ours_cpu * 1e6:10.1f} us server CPU per round trip")
        print(f"mcp MCPServer  {theirs_cpu * 1e6:10.1f} us server CPU per round trip")
        print(f"cpu ratio      {theirs_cpu / ours_cpu:10.2f}x  (server CPU per round trip)")
    for other in others:
        speed = statistics.median(compared[other.name])
        cpu = other.cpu_per_call
        spent = "" if cpu is None else f", {cpu * 1e6:.1f} us server CPU per round trip"
        print(f"compared       {other.name}: {other.rate:.1f} round trips/s{spent}")
        print(f"  this one     {speed:10.2f}x  as fast (median of blocks)")


if __name__ == "__main__":
    main()
