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
paid. The test compares the equity at every bar's close within 0.01 %.
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


def _side(closes: list[int], t: int) -> int:
    """+1 (long) or -1 (short) decided at bar ``t``'s close; 0 before the slow mean."""
    if t + 1 < SLOW:
        return 0
    fast = sum(closes[t + 1 - FAST : t + 1]) * SLOW
    slow = sum(closes[t + 1 - SLOW : t + 1]) * FAST
    return 1 if fast > slow else -1


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
