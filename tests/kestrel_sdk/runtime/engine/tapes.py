"""Small in-memory scenarios for engine and lang tests, built from literal bars.

Each bar is ``(time, {symbol: (open, high, low, close, volume)})`` with prices as decimal
strings; terms override the scenario defaults of docs/spec.md §4.
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from datetime import date
from decimal import Decimal
from typing import Any

from kestrel_protocol import Scenario, root_of_bytes
from kestrel_sdk.runtime.catalog.model import LoadedScenario, SymbolColumns, Tape

__all__ = ["Bar", "daily", "minutes", "scenario", "two_symbols_peak_then_crash"]

Bar = tuple[str, dict[str, tuple[str, str, str, str, int]]]


def _scale(values: Sequence[str]) -> int:
    return max((len(v.split(".")[1]) if "." in v else 0) for v in values)


def scenario(
    bars: Sequence[Bar],
    *,
    cash: str = "100000.00",
    shortable: bool = False,
    max_position: int = 100000,
    max_drawdown: str = "1.0",
    bps: str = "0",
    minimum: str = "0.00",
    participation: str = "1",
    slippage_bps: str = "0",
    tick: str = "0.01",
    lot: int = 1,
    interval: str = "1d",
    bars_per_year: int = 252,
    scenario_id: str = "test",
) -> LoadedScenario:
    """A LoadedScenario over ``bars`` (every bar must list every symbol)."""
    symbols = tuple(bars[0][1])
    prices = [p for _, row in bars for ohlcv in row.values() for p in ohlcv[:4]]
    scale = max(2, _scale(prices))
    unit = Decimal(10) ** scale
    columns: dict[str, SymbolColumns] = {}
    for sym in symbols:
        cols: list[array[int]] = [array("q") for _ in range(5)]
        for _, row in bars:
            o, h, lo, c, v = row[sym]
            for col, val in zip(cols, (o, h, lo, c), strict=False):
                col.append(int(Decimal(val) * unit))
            cols[4].append(v)
        columns[sym] = SymbolColumns(*cols)
    times = tuple(t for t, _ in bars)
    days = array("q", (date.fromisoformat(t[:10]).toordinal() for t in times))
    csv = "\n".join(f"{t},{sorted(row.items())}" for t, row in bars).encode()
    tape = Tape(symbols, times, days, scale, columns, root_of_bytes(csv))
    sc = Scenario.with_root(
        id=scenario_id,
        title="test",
        description="test scenario",
        instruments=[{"symbol": s, "tick": tick, "lot": lot} for s in symbols],
        tape={
            "interval": interval,
            "bars": len(times),
            "start": times[0],
            "end": times[-1],
            "bars_per_year": bars_per_year,
            "root": tape.root,
        },
        account={
            "cash": cash,
            "shortable": shortable,
            "max_position": max_position,
            "max_drawdown": max_drawdown,
        },
        fees={"bps": bps, "minimum": minimum},
        fill={"participation": participation, "slippage_bps": slippage_bps},
    )
    return LoadedScenario(sc, None, lambda: tape)


def daily(
    rows: Sequence[tuple[Any, ...]],
    symbol: str = "ACME",
    **terms: Any,
) -> LoadedScenario:
    """One symbol, one bar per day from 2024-01-01; rows are (O, H, L, C[, volume])."""
    bars: list[Bar] = []
    start = date(2024, 1, 1).toordinal()
    for i, row in enumerate(rows):
        volume = int(row[4]) if len(row) == 5 else 1_000_000
        when = date.fromordinal(start + i).isoformat() + "T00:00:00Z"
        bars.append((when, {symbol: (row[0], row[1], row[2], row[3], volume)}))
    return scenario(bars, **terms)


def minutes(
    per_day: int, days: int, price: str = "100.00", symbol: str = "ACME", **terms: Any
) -> LoadedScenario:
    """A flat minute tape: ``per_day`` bars from 14:30 UTC on ``days`` consecutive days."""
    bars: list[Bar] = []
    start = date(2024, 1, 1).toordinal()
    for d in range(days):
        day = date.fromordinal(start + d).isoformat()
        for m in range(per_day):
            hh, mm = divmod(14 * 60 + 30 + m, 60)
            bars.append(
                (f"{day}T{hh:02d}:{mm:02d}:00Z", {symbol: (price, price, price, price, 1000)})
            )
    return scenario(bars, interval="1m", **terms)


def two_symbols_peak_then_crash() -> LoadedScenario:
    """AAA and BBB at 100, 100, 110 (the peak), 80, 80: bars 2 and 3 pass with two
    symbols held and nothing to match."""

    def bar(day: int, price: str) -> Bar:
        row = (price, price, price, price, 10**6)
        return (f"2024-01-0{day}T00:00:00Z", dict.fromkeys(("AAA", "BBB"), row))

    prices = ("100", "100", "110", "80", "80")
    return scenario([bar(d, p) for d, p in enumerate(prices, 1)], max_drawdown="0.2")
