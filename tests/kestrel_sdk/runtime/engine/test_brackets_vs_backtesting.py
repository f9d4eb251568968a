"""Kestrel's brackets fill as backtesting.py's SL/TP orders do, on backtesting.py's GOOG.

The strategy, the same on both sides: at the close of every 5th bar (from bar 5:
backtesting.py calls ``next`` from bar 1), when flat with no
order working, buy 10 shares at market with a stop-loss at 97% of the close (rounded
down to the cent) and a take-profit at 104% (rounded up): ``self.buy(size=10, sl=SL,
tp=TP)`` in backtesting.py, ``buy 10 GOOG take TP loss SL`` in Kestrel. Both are driven
bar by bar and decide on the same integer cents.

Conventions aligned (docs/engine.md "Order forms"):

* backtesting.py with ``trade_on_close=False`` fills a market order placed at bar t's
  close at bar t+1's open; Kestrel fills an order placed at clock t at bar t+1's open.
* backtesting.py activates a market entry's SL/TP on its fill bar (it re-processes the
  order queue: "SL hitting in the same bar the order was open", its issue 119) and
  processes the SL first when one bar reaches both; Kestrel matches a market entry's
  children from its fill bar, the stop-loss first.
* A gap through either fills at the bar's open on both sides (backtesting.py's
  ``min(open, sl)`` / ``max(open, tp)``; Kestrel's stop and limit rules).
* Commission 0 on both sides (fees are compared elsewhere); trades still open when the
  data ends are left out on both sides (``finalize_trades=False``; Kestrel's clock stops
  one bar short of the tape's end, so no end-of-tape liquidation).
"""

from __future__ import annotations

import warnings
from decimal import Decimal
from typing import Any

from kestrel_sdk.runtime.engine import SessionEngine

from tests.kestrel_sdk.runtime.engine.tapes import Bar, scenario

EVERY = 5
QTY = 10
SYMBOL = "GOOG"
Trade = tuple[int, str, int, str]
"""(entry bar, entry price, exit bar, exit price)."""


def _goog() -> Any:
    from backtesting.test import GOOG  # type: ignore[import-untyped]

    return GOOG


def _cents(value: float) -> int:
    return int(Decimal(f"{value:.2f}") * 100)


def _levels(close: int) -> tuple[int, int]:
    """(stop-loss, take-profit) in cents for an entry decided at ``close`` cents."""
    return close * 97 // 100, -(-close * 104 // 100)


def _price(cents: int) -> str:
    return f"{cents // 100}.{cents % 100:02d}"


def _peer_trades(data: Any) -> list[Trade]:
    from backtesting import Backtest, Strategy  # type: ignore[import-untyped]

    class Bracketed(Strategy):  # type: ignore[misc]
        def init(self) -> None:
            pass

        def next(self) -> None:
            t = len(self.data) - 1
            if t % EVERY or self.position or self.orders or t >= len(data) - 2:
                return
            loss, take = _levels(_cents(self.data.Close[-1]))
            self.buy(size=QTY, sl=loss / 100, tp=take / 100)

    test = Backtest(
        data,
        Bracketed,
        cash=100_000,
        commission=0,
        trade_on_close=False,
        exclusive_orders=False,
        finalize_trades=False,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        stats = test.run()
    return [
        (
            int(trade.EntryBar),
            f"{trade.EntryPrice:.2f}",
            int(trade.ExitBar),
            f"{trade.ExitPrice:.2f}",
        )
        for trade in stats["_trades"].itertuples()
    ]


def _kestrel_trades(data: Any) -> list[Trade]:
    bars: list[Bar] = [
        (
            f"{when.date().isoformat()}T00:00:00Z",
            {
                SYMBOL: (
                    f"{row.Open:.2f}",
                    f"{row.High:.2f}",
                    f"{row.Low:.2f}",
                    f"{row.Close:.2f}",
                    int(row.Volume),
                )
            },
        )
        for when, row in zip(data.index, data.itertuples(), strict=True)
    ]
    engine = SessionEngine(scenario(bars), "ks_goog")
    closes = [_cents(row.Close) for row in data.itertuples()]
    for t in range(len(bars) - 2):  # the clock stops one bar short of the end
        flat = engine.account.position(SYMBOL) == 0 and not engine.open_orders
        if t % EVERY == 0 and t > 0 and flat:
            loss, take = _levels(closes[t])
            engine.submit(f"buy {QTY} {SYMBOL} take {_price(take)} loss {_price(loss)}")
        engine.submit("advance")
    blotter = engine.blotter()
    entries = {o.id: o for o in blotter.orders if o.parent is None}
    entry_fill = {f.order: f for f in blotter.fills if f.order in entries}
    trades: list[Trade] = []
    for fill in blotter.fills:
        order = next(o for o in blotter.orders if o.id == fill.order)
        if order.parent is not None:
            entry = entry_fill[order.parent]
            trades.append((entry.bar, entry.price, fill.bar, fill.price))
    return trades


def test_brackets_fill_as_backtesting_py_sl_tp_on_goog() -> None:
    data = _goog()
    ours = _kestrel_trades(data)
    theirs = _peer_trades(data)
    assert len(theirs) >= 100, "the strategy should trade enough to compare"
    same_bar_stops = [t for t in theirs if t[0] == t[2]]
    assert same_bar_stops, "some stop-loss should fill on its entry's own bar"
    assert ours == theirs
