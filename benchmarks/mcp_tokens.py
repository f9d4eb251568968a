"""Tokens a model reads per step of a demo session over MCP: the text content of each
tool result, as bytes / 4, against the JSON of its ``structuredContent`` (what the text
was before results rendered compactly, ``kestrel_protocol.surface.compact``).

The session is ``kestrel demo``'s: the SMA(10/30)-cross agent on ``acme-trend``, one
``kestrel_session_submit`` per bar, after ``kestrel_session_open`` and a first
``kestrel_session_frame``, then ``kestrel_session_history`` (the last 20 bars, once, as an
agent checking its averages would), ``kestrel_session_close`` and ``kestrel_grade``;
every call through the one dispatcher all MCP faces send (``call_tool`` over
``local_transport`` on a memory store). Prints, per tool, the calls and the mean tokens
of the text now and of the JSON, and the totals. Deterministic: the same figures on any
machine.

    uv run python benchmarks/mcp_tokens.py [--scenario acme-trend]
"""

from __future__ import annotations

import argparse
import tempfile
from collections import defaultdict
from decimal import Decimal
from typing import Any

import anyio
from kestrel_protocol.surface import SURFACE, ToolResult, call_tool
from kestrel_sdk.report.agent import SmaCrossAgent
from kestrel_sdk.transports import local_transport

Counts = dict[str, list[int]]


async def session(scenario: str) -> Counts:
    """Run the demo's session; per tool, [calls, text bytes, JSON bytes]."""
    counts: Counts = defaultdict(lambda: [0, 0, 0])
    with tempfile.TemporaryDirectory() as home:
        transport = local_transport(home=home, store="memory:")

        async def call(name: str, **arguments: Any) -> dict[str, Any]:
            result = await call_tool(SURFACE, transport, name, arguments)
            if not isinstance(result, ToolResult) or result["isError"]:
                raise SystemExit(f"{name} failed: {result}")
            row = counts[name]
            row[0] += 1
            row[1] += len(result["content"][0]["text"].encode())
            row[2] += len(result.json_text.encode())
            data: dict[str, Any] = result["structuredContent"]
            return data

        sid = (await call("kestrel_session_open", scenario=scenario))["sessionId"]
        frame = (await call("kestrel_session_frame", sessionId=sid))["frame"]
        symbol = sorted(frame["marks"])[0]
        agent = SmaCrossAgent(symbol)
        while frame["status"] == "open":
            source = agent.decide(Decimal(frame["marks"][symbol]))
            frame = (await call("kestrel_session_submit", sessionId=sid, source=source))[
                "delivery"
            ]["frame"]
        await call("kestrel_session_history", sessionId=sid, bars=20)
        await call("kestrel_session_close", sessionId=sid)
        await call("kestrel_grade", sessionId=sid)
        await transport.aclose()
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenario", default="acme-trend")
    args = parser.parse_args()
    counts = anyio.run(session, args.scenario)
    print(f"{'tool':<26} {'calls':>6} {'tokens/call now':>16} {'as JSON':>8} {'ratio':>6}")
    calls = text = json = 0
    for name, (n, t, j) in counts.items():
        calls, text, json = calls + n, text + t, json + j
        print(f"{name:<26} {n:>6} {t / n / 4:>16.0f} {j / n / 4:>8.0f} {j / t:>6.2f}")
    steps = counts["kestrel_session_submit"][0]
    print(
        f"{'whole session':<26} {calls:>6} {text / 4:>16.0f} {json / 4:>8.0f} {json / text:>6.2f}"
    )
    now, before = text / 4 / steps, json / 4 / steps
    print(f"per step ({steps} submits): {now:.0f} tokens now, {before:.0f} as JSON")


if __name__ == "__main__":
    main()
