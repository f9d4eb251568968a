"""The canonical tape of checked bars, written as it is made and hashed on the way.

Rows go out in canonical order (by time, then symbol) a block at a time, so writing a
2,000,000-bar tape holds a block, never the tape; its root is the hash of exactly the bytes
written. Prices go on the tick's grid (half to even) with the tape's places.
"""

from __future__ import annotations

from collections.abc import Callable
from decimal import ROUND_HALF_EVEN, Decimal
from functools import lru_cache
from typing import BinaryIO

from kestrel_protocol import DEFAULT_DECIMAL_CONTEXT, RootOfBytes

from ..runtime.catalog.tapes import HEADER, TapeShape
from .bars import Bars
from .checks import time_text

__all__ = ["write_tape"]

_BLOCK = 8192  # rows a write


def _price_text(tick: Decimal, scale: int) -> Callable[[str], str]:
    context = DEFAULT_DECIMAL_CONTEXT
    quantum = Decimal(1).scaleb(-scale, context)

    @lru_cache(maxsize=1 << 16)  # prices repeat: a file holds far fewer than its rows
    def text(read: str) -> str:
        ticks = context.divide(Decimal(read), tick).to_integral_value(ROUND_HALF_EVEN)
        return f"{context.multiply(ticks, tick).quantize(quantum, context=context):f}"

    return text


def write_tape(bars: Bars, out: BinaryIO) -> TapeShape:
    """Write the canonical tape of ``bars`` to ``out``; its shape, root included."""
    root = RootOfBytes()
    price = _price_text(bars.tick, bars.scale)
    series = bars.series
    times = series[0].keys
    block: list[str] = [HEADER, "\n"]

    def flush() -> None:
        data = "".join(block).encode("utf-8")
        root.update(data)
        out.write(data)
        block.clear()

    for index in range(len(bars)):
        moment = time_text(times[index])
        for one in series:
            open_, high, low, close, volume = one.fields(index)
            block.append(
                f"{moment},{one.symbol},{price(open_)},{price(high)},{price(low)},"
                f"{price(close)},{volume}\n"
            )
        if len(block) >= _BLOCK:
            flush()
    flush()
    return TapeShape(bars=len(bars), start=bars.start, end=bars.end, root=root.root())
