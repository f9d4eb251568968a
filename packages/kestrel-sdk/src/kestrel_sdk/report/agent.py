"""The demo agent: a moving-average crossover trading through the SDK, one bar at a time.

It is deliberately an *agent loop* (read the frame, decide, submit), the same shape an
LLM agent has over MCP, so the demo exercises the path users depend on.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from decimal import Decimal, localcontext

from kestrel_protocol import DEFAULT_DECIMAL_CONTEXT, SessionResponse

from ..client import KestrelSession

__all__ = ["SmaCrossAgent"]


class SmaCrossAgent:
    """Long ``qty`` shares while the fast SMA of closes is above the slow one, flat otherwise."""

    def __init__(self, symbol: str, fast: int = 10, slow: int = 30, qty: int = 100) -> None:
        self.symbol, self.fast, self.slow, self.qty = symbol, fast, slow, qty
        self._closes: deque[Decimal] = deque(maxlen=slow)
        self._long = False

    def decide(self, close: Decimal) -> str:
        """The statement(s) for this bar: an order when the averages cross, then advance."""
        self._closes.append(close)
        if len(self._closes) == self.slow:
            closes = list(self._closes)
            with localcontext(DEFAULT_DECIMAL_CONTEXT):
                fast = sum(closes[-self.fast :], Decimal(0)) / self.fast
                slow = sum(closes, Decimal(0)) / self.slow
            if fast > slow and not self._long:
                self._long = True
                return f"buy {self.qty} {self.symbol}\nadvance\n"
            if fast < slow and self._long:
                self._long = False
                return f"sell {self.qty} {self.symbol}\nadvance\n"
        return "advance\n"

    async def run(
        self, session: KestrelSession, on_step: Callable[[SessionResponse], None] | None = None
    ) -> SessionResponse:
        """Trade until the tape ends (the runtime stands the session down by itself)."""
        delivery = await session.frame()
        close = Decimal(delivery.frame.marks[self.symbol])
        while True:
            response = await session.submit(self.decide(close))
            if on_step is not None:
                on_step(response)
            if response.disposition == "stood-down":
                return response
            close = Decimal(response.delivery.frame.marks[self.symbol])
