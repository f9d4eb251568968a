"""backtesting.py's GOOG, imported as a scenario, trades exactly as backtesting.py does.

The strategy is the engine benchmark's ``SmaCross`` (``benchmarks/engine.py``), with its
fill conventions: signals on closes (close x 20 against the 20-close sum in integer
cents, so a tie is a tie on both sides), market orders filled at the next bar's open
(``trade_on_close=False``), 10 bps commission, and the open trade closed at the last
trade open when the data ends closed on its last bar: backtesting.py's
``finalize_trades=True`` fills that close at the last bar's open, Kestrel's end-of-tape
stand-down at the last bar's close (its mark, docs/spec.md §5) -- the one fill whose price differs
by convention, checked as such.
"""

from __future__ import annotations

import importlib.util
import sys
import warnings
from collections import deque
from decimal import Decimal
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from kestrel_sdk import create_sdk, local_transport
from kestrel_sdk.scenarios import scenario_from_frame

ROOT = Path(__file__).resolve().parents[3]
SYMBOL = "GOOG"


def _benchmark() -> ModuleType:
    spec = importlib.util.spec_from_file_location("engine_benchmark", ROOT / "benchmarks/engine.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _peer_fills(frame: Any, bench: ModuleType) -> list[tuple[int, int, Decimal]]:
    from backtesting import Backtest  # type: ignore[import-untyped]

    test = Backtest(
        frame,
        bench.SmaCross,
        cash=bench.CASH,
        commission=bench.COMMISSION,
        trade_on_close=False,
        exclusive_orders=False,
        finalize_trades=True,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        stats = test.run()
    fills: list[tuple[int, int, Decimal]] = []
    for trade in stats["_trades"].itertuples():
        fills.append((int(trade.EntryBar), int(trade.Size), Decimal(f"{trade.EntryPrice:.2f}")))
        fills.append((int(trade.ExitBar), -int(trade.Size), Decimal(f"{trade.ExitPrice:.2f}")))
    return sorted(fills)


async def _kestrel_fills(
    home: Path, catalog: Path, bench: ModuleType
) -> list[tuple[int, int, Decimal]]:
    window_size, qty = bench.WINDOW, bench.QTY
    async with create_sdk(local_transport(home=home, catalog_paths=[catalog])) as sdk:
        opened = await sdk.open_session("goog")
        assert opened.session is not None
        session = opened.session
        frame = (await session.frame()).frame
        close = bench._cents(frame.marks[SYMBOL])
        window: deque[int] = deque([close], maxlen=window_size)
        prev: tuple[int, int] | None = None
        long = False
        while True:
            order = ""
            if len(window) == window_size:
                now = (close * window_size, sum(window))
                if prev is not None:
                    if prev[0] < prev[1] and now[0] > now[1] and not long:
                        order = f"buy {qty} {SYMBOL}\n"
                    elif prev[0] > prev[1] and now[0] < now[1] and long:
                        order = f"sell {qty} {SYMBOL}\n"
                prev = now
            response = await session.submit(order + "advance 1")
            frame = response.delivery.frame
            long = bool(frame.positions) and int(frame.positions[0].qty) > 0
            if response.disposition == "stood-down":
                break
            close = bench._cents(frame.marks[SYMBOL])
            window.append(close)
        blotter = await session.blotter()
        await session.close()
    sides = {order.id: order.side for order in blotter.orders}
    return sorted(
        (fill.bar, int(fill.qty) * (1 if sides[fill.order] == "buy" else -1), Decimal(fill.price))
        for fill in blotter.fills
    )


@pytest.mark.anyio
async def test_sma_cross_on_imported_goog_fills_as_backtesting_py(tmp_path: Path) -> None:
    from backtesting.test import GOOG  # type: ignore[import-untyped]

    bench = _benchmark()
    scenario_from_frame(GOOG, "goog", symbol=SYMBOL).write(tmp_path / "catalog" / "goog")
    ours = await _kestrel_fills(tmp_path / "home", tmp_path / "catalog", bench)
    theirs = _peer_fills(GOOG, bench)
    assert len(theirs) > 20  # the strategy trades: the comparison means something
    last = len(GOOG) - 1
    assert theirs[-1] == (last, -bench.QTY, Decimal(f"{GOOG.Open.iloc[-1]:.2f}"))  # forced close
    assert ours[-1] == (last, -bench.QTY, Decimal(f"{GOOG.Close.iloc[-1]:.2f}"))
    assert ours[:-1] == theirs[:-1]
