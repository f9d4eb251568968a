"""Shorts on a margin account with commissions end where backtesting.py's do, on its GOOG.

The strategy, the same on both sides: from bar 30, at each close, hold +100 shares when
the 10-bar mean of the closes (in cents) is above the 30-bar mean, else -100 (short);
reversing is one market order for the whole swing in Kestrel (``buy 200 GOOG``) and
``position.close()`` then ``buy(size=100)`` in backtesting.py. Both fill at the next
bar's open. Terms aligned: cash 100,000, commission 0.1 % of each fill's notional
(backtesting.py's ``commission=0.001``, charged at a trade's entry and at its exit;
Kestrel's ``fees.bps = 10``, each fee rounded to the cent), a margin account of
leverage 2 (``margin=0.5``) that the strategy never strains (no order is near the
buying power, no margin call: backtesting.py has no maintenance margin), no interest or
borrow cost (backtesting.py has none), no slippage. Trades still open when the data
ends are left out on both sides (the clock stops one bar short of the tape's end).

docs/engine.md ("Accounts") and backtesting.py agree on every bar's equity: cash plus
the position at the close, a short's proceeds in cash, both commissions taken when
paid. The test compares the equity at every bar's close within 0.01 % (observed 1e-7).
The same on backtesting.py's BTCUSD in Kestrel's lots of 0.01 bitcoin, half the equity
long or short (3- and 8-bar means of monthly closes), backtesting.py trading whole
centi-bitcoins of its prices / 100 (observed 3e-9).
"""

from __future__ import annotations

import warnings
from decimal import Decimal
from typing import Any

from kestrel_sdk.runtime.catalog.builder import build_loaded_scenario
from kestrel_sdk.runtime.engine import SessionEngine

SYMBOL = "GOOG"
SIZE = 100
FAST, SLOW = 10, 30
MARGIN = {"leverage": "2", "maintenance_margin": "0.05", "borrow_rate": "0", "cash_rate": "0"}


def _goog() -> Any:
    from backtesting.test import GOOG  # type: ignore[import-untyped]

    return GOOG


def _cents(value: float) -> int:
    return int(Decimal(f"{value:.2f}") * 100)


def _side(closes: list[int], t: int, *, fast: int = FAST, slow: int = SLOW) -> int:
    """+1 (long) or -1 (short) decided at bar ``t``'s close (the ``fast``-bar mean above
    the ``slow``-bar mean or not); 0 before the slow mean."""
    if t + 1 < slow:
        return 0
    fast_sum = sum(closes[t + 1 - fast : t + 1]) * slow
    slow_sum = sum(closes[t + 1 - slow : t + 1]) * fast
    return 1 if fast_sum > slow_sum else -1


def _peer_equity(data: Any) -> list[float]:
    from backtesting import Backtest, Strategy  # type: ignore[import-untyped]

    closes = [_cents(c) for c in data.Close]

    class Swing(Strategy):  # type: ignore[misc]
        def init(self) -> None:
            pass

        def next(self) -> None:
            t = len(self.data) - 1
            side = _side(closes, t)
            if not side or t >= len(data) - 2:
                return
            if side > 0 and not self.position.is_long:
                self.position.close()
                self.buy(size=SIZE)
            elif side < 0 and not self.position.is_short:
                self.position.close()
                self.sell(size=SIZE)

    test = Backtest(
        data,
        Swing,
        cash=100_000,
        commission=0.001,
        margin=0.5,
        trade_on_close=False,
        exclusive_orders=False,
        finalize_trades=False,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        stats = test.run()
    return [float(e) for e in stats["_equity_curve"]["Equity"]]


def _kestrel_equity(data: Any) -> tuple[list[Decimal], int]:
    rows = [
        (f"{r.Open:.2f}", f"{r.High:.2f}", f"{r.Low:.2f}", f"{r.Close:.2f}", int(r.Volume))
        for r in data.itertuples()
    ]
    loaded = build_loaded_scenario(
        rows,
        symbol=SYMBOL,
        start=f"{data.index[0].date().isoformat()}T00:00:00Z",
        shortable=True,
        fee_bps="10",
        margin=MARGIN,
    )
    engine = SessionEngine(loaded, "ks_goog")
    closes = [_cents(c) for c in data.Close]
    reversals = 0
    for t in range(len(rows) - 2):  # the clock stops one bar short of the end
        side = _side(closes, t)
        held = engine.account.position(SYMBOL)
        if side and held * side <= 0:
            verb = "buy" if side > 0 else "sell"
            engine.submit(f"{verb} {SIZE + abs(held)} {SYMBOL}")
            reversals += 1
        engine.submit("advance")
    assert not [o for o in engine.orders if o.status == "rejected"]
    assert engine.margin is not None
    assert not engine.margin.calls
    unit = Decimal(10) ** -engine.terms.money_scale
    return [Decimal(e) * unit for e in engine.series()], reversals


def test_a_margin_account_s_shorts_and_commissions_match_backtesting_py_on_goog() -> None:
    data = _goog()
    ours, reversals = _kestrel_equity(data)
    theirs = _peer_equity(data)
    assert reversals >= 50, "the strategy should go long and short often enough to compare"
    assert len(ours) == len(data) - 1
    worst = max(abs(Decimal(str(b)) / a - 1) for a, b in zip(ours, theirs, strict=False))
    print(
        f"{reversals} reversals; final equity {ours[-1]} vs {theirs[len(ours) - 1]:.2f};"
        f" largest gap over {len(ours)} bars {worst:.2e}"
    )
    assert worst < Decimal("0.0001")


def _btc() -> Any:
    from backtesting.test import BTCUSD

    return BTCUSD


def _kestrel_btc(data: Any) -> tuple[list[Decimal], dict[int, int]]:
    """Swing long and short half the equity in 0.01 lots of bitcoin; the equity at every
    bar and each reversal's order (bar → signed lots) for the peer to place."""
    rows = [
        (f"{r.Open:.2f}", f"{r.High:.2f}", f"{r.Low:.2f}", f"{r.Close:.2f}", 10**9)
        for r in data.itertuples()
    ]  # (a volume no order reaches: backtesting.py has no participation cap)
    loaded = build_loaded_scenario(
        rows, symbol="BTCUSD", lot="0.01", shortable=True, fee_bps="10", margin=MARGIN
    )
    engine = SessionEngine(loaded, "ks_btc")
    closes = [_cents(c) for c in data.Close]
    placed: dict[int, int] = {}
    for t in range(len(rows) - 2):
        side = _side(closes, t, fast=3, slow=8)
        held = engine.account.position("BTCUSD")  # in lots of 0.01
        if side and held * side <= 0:
            equity = Decimal(engine.frame().account.equity)
            lots = int(equity / 2 / (Decimal(closes[t]) / 100) * 100)  # half the equity
            placed[t] = side * lots - held
            verb = "buy" if side > 0 else "sell"
            engine.submit(f"{verb} {Decimal(abs(placed[t])).scaleb(-2)} BTCUSD")
        engine.submit("advance")
    assert not [o for o in engine.orders if o.status == "rejected"]
    unit = Decimal(10) ** -engine.terms.money_scale
    return [Decimal(e) * unit for e in engine.series()], placed


def _peer_btc(data: Any, placed: dict[int, int]) -> list[float]:
    """backtesting.py trading whole units of a centi-bitcoin (its prices / 100)."""
    from backtesting import Backtest, Strategy

    class Placed(Strategy):  # type: ignore[misc]
        def init(self) -> None:
            pass

        def next(self) -> None:
            lots = placed.get(len(self.data) - 1)
            if lots:
                self.position.close()
                held = abs(self.position.size)
                (self.buy if lots > 0 else self.sell)(size=abs(lots) - held)

    scaled = data.copy()
    for column in ("Open", "High", "Low", "Close"):
        scaled[column] = [float(Decimal(f"{v:.2f}") / 100) for v in data[column]]
    test = Backtest(
        scaled, Placed, cash=100_000, commission=0.001, margin=0.5, finalize_trades=False
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        stats = test.run()
    return [float(e) for e in stats["_equity_curve"]["Equity"]]


def test_fractional_lots_of_bitcoin_long_and_short_match_backtesting_py() -> None:
    """Hundredths of a bitcoin (``lot = "0.01"``) in Kestrel are whole centi-bitcoins in
    backtesting.py (prices / 100): the same orders give the same equity at every bar."""
    data = _btc()
    ours, placed = _kestrel_btc(data)
    theirs = _peer_btc(data, placed)
    assert len(placed) >= 10
    worst = max(abs(Decimal(str(b)) / a - 1) for a, b in zip(ours, theirs, strict=False))
    print(
        f"{len(placed)} reversals; final equity {ours[-1]} vs {theirs[len(ours) - 1]:.2f};"
        f" largest gap over {len(ours)} bars {worst:.2e}"
    )
    assert worst < Decimal("0.0001")
