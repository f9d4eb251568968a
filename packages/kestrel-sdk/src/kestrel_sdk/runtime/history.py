"""A session's history: the tape's rows up to and including the clock bar, never later.

The rows are the tape's own (prices at the tape's scale, exactly as its canonical CSV
writes them), so an agent that reads history sees what the tape says and nothing the
clock has not reached.
"""

from __future__ import annotations

from kestrel_protocol import HistoryBar, KestrelError, RefusalCode

from .catalog.model import Tape
from .engine.wire import construct

__all__ = ["history_bars"]


def history_bars(tape: Tape, clock: int, bars: int, symbol: str | None) -> list[HistoryBar]:
    """The last ``bars`` bar times up to ``clock`` (inclusive), oldest first: one row per
    symbol of the tape (or of ``symbol`` alone). An unknown symbol is INVALID_ARGUMENT."""
    if symbol is not None and symbol not in tape.columns:
        raise KestrelError(
            RefusalCode.INVALID_ARGUMENT,
            f"symbol {symbol!r} is not in this scenario (it has {', '.join(tape.symbols)})",
            {"symbol": symbol, "symbols": list(tape.symbols)},
        )
    symbols = tape.symbols if symbol is None else (symbol,)
    price = tape.price_text
    volume = tape.volume_member
    rows: list[HistoryBar] = []
    for index in range(max(0, clock - bars + 1), clock + 1):
        time = tape.times[index]
        for name in symbols:
            col = tape.columns[name]
            members = {
                "time": time,
                "symbol": name,
                "open": price(col.open[index]),
                "high": price(col.high[index]),
                "low": price(col.low[index]),
                "close": price(col.close[index]),
                "volume": volume(col.volume[index]),
            }
            rows.append(construct(HistoryBar, members))
    return rows
