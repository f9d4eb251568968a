"""An agent loop through the SDK: SMA(20) cross, 10 shares, one bar per step.

Run it with ``uv run --package kestrel-sdk python examples/sma_cross.py [SCENARIO]``
(default ``acme-trend``; any catalog scenario, your own imported ones included). It
trades the scenario's first symbol. Each step reads the frame's mark, decides on the
closes seen so far, and submits at most one order followed by ``advance 1``; orders fill
at the next bar's open. When the tape ends the runtime stands the session down
(flattening it), and the agent closes and grades the session and prints the grade. If
anything fails on the way, the session is closed all the same.
"""

from __future__ import annotations

import json
import sys
from collections import deque

import anyio
from kestrel_protocol import GradeResult
from kestrel_sdk import KestrelSession, create_sdk, local_transport, render_frame

WINDOW = 20
QTY = 10


def cents(mark: str) -> int:
    """A 2-decimal mark as integer cents (exact, no floats)."""
    whole, _, frac = mark.partition(".")
    return int(whole) * 100 + int((frac + "00")[:2])


async def main(scenario: str = "acme-trend") -> GradeResult:
    async with create_sdk(local_transport()) as sdk:
        opened = await sdk.open_session(scenario)
        if opened.session is None:
            raise SystemExit("the session is gated; this example does not pay")
        session = opened.session
        try:
            await trade(session)
        finally:
            await session.close()
        result = await sdk.grade_until_done(session.id)
        print(json.dumps(result.to_json(), indent=2))
        return result


async def trade(session: KestrelSession) -> None:
    """Trade the SMA cross until the tape ends (the runtime stands the session down)."""
    delivery = await session.frame()
    symbol = sorted(delivery.frame.marks)[0]
    window: deque[int] = deque(maxlen=WINDOW)
    close = cents(delivery.frame.marks[symbol])
    window.append(close)
    prev: tuple[int, int] | None = None  # (close * WINDOW, sum of the window) one bar ago
    long = False
    while True:
        order = ""
        if len(window) == WINDOW:
            now = (close * WINDOW, sum(window))
            if prev is not None:
                crossed_up = prev[0] < prev[1] and now[0] > now[1]
                crossed_down = prev[0] > prev[1] and now[0] < now[1]
                if crossed_up and not long:
                    order = f"buy {QTY} {symbol}\n"
                elif crossed_down and long:
                    order = f"sell {QTY} {symbol}\n"
            prev = now
        response = await session.submit(order + "advance 1\n")
        frame = response.delivery.frame
        long = any(p.symbol == symbol and int(p.qty) > 0 for p in frame.positions)
        if response.disposition == "stood-down":
            break
        close = cents(frame.marks[symbol])
        window.append(close)
    print(render_frame(frame))


if __name__ == "__main__":
    anyio.run(main, sys.argv[1] if len(sys.argv) > 1 else "acme-trend")
