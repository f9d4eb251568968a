"""A graded session's equity curve, fills and round-trip trades, exact, bar by bar.

Everything is rebuilt through the SDK from the grade's own artifacts (the blotter, the
scenario's tape), as the grade report does: the equity at a bar's close is the cash plus
each position at that close, changing only at fills; the trades are the grade's round
trips (:func:`kestrel_sdk.runtime.engine.trades.round_trips`, the definition behind the
grade's trade metrics). Numbers stay exact (:class:`~decimal.Decimal`,
:class:`~fractions.Fraction`) here; :mod:`.tables` turns them into floats for frames.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal, localcontext
from fractions import Fraction

from kestrel_protocol import DEFAULT_DECIMAL_CONTEXT

from ..report.collect import SessionSources, closes_by_symbol, equity_series
from ..runtime.engine.trades import Leg, round_trips

__all__ = ["EquityPoint", "FillRow", "Ledger", "TradeRow", "ledger_of"]


@dataclass(frozen=True, slots=True)
class EquityPoint:
    """The account at one bar's close."""

    bar: int
    time: datetime
    equity: Decimal
    drawdown: Fraction  # (peak − equity) / peak, 0 at a new peak
    return_: Fraction  # equity / starting equity − 1


@dataclass(frozen=True, slots=True)
class FillRow:
    """One execution with its order's side and symbol."""

    id: str
    order: str
    bar: int
    time: datetime
    symbol: str
    side: str  # "buy" or "sell"
    qty: int | Decimal
    """An integer, as always; a fractional lot's quantity as an exact ``Decimal``."""
    price: Decimal
    fee: Decimal


@dataclass(frozen=True, slots=True)
class TradeRow:
    """One round trip (see :mod:`kestrel_sdk.runtime.engine.trades`)."""

    symbol: str
    side: str  # "long" or "short"
    qty: int | Decimal
    entry_bar: int
    entry_time: datetime
    entry_price: Fraction
    exit_bar: int | None  # None: still open when the session ended, marked at its close
    exit_time: datetime | None
    exit_price: Fraction
    pnl: Fraction
    return_: Fraction
    fees: Fraction


@dataclass(frozen=True, slots=True)
class Ledger:
    """A session's equity curve (bar 0 to the last processed bar), fills and trades."""

    equity: list[EquityPoint]
    fills: list[FillRow]
    trades: list[TradeRow]


def _places(qty: int | Decimal) -> int:
    return 0 if isinstance(qty, int) else max(0, -int(qty.as_tuple().exponent))


def _shares(value: Decimal) -> int | Decimal:
    """A whole quantity as an integer (every quantity of a scenario of whole lots)."""
    return int(value) if value == value.to_integral_value() else value


def _time(text: str) -> datetime:
    return datetime.fromisoformat(text)


def ledger_of(sources: SessionSources) -> Ledger:
    """The ledger of a graded session's sources (no further I/O)."""
    times, closes = closes_by_symbol(sources.tape)
    last = sources.last_bar
    clock = [_time(t) for t in times[: last + 1]]
    cash = Decimal(sources.scenario.account.cash)
    series = equity_series(cash, sources.blotter, closes, last)
    with localcontext(DEFAULT_DECIMAL_CONTEXT):  # the default's 28 digits, not the caller's
        equity: list[EquityPoint] = []
        peak = series[0] if series else cash
        for bar, value in enumerate(series):
            peak = max(peak, value)
            drawdown = Fraction(peak - value) / Fraction(peak) if peak > 0 else Fraction(0)
            ret = Fraction(value) / Fraction(cash) - 1 if cash else Fraction(0)
            equity.append(EquityPoint(bar, clock[bar], value, drawdown, ret))
        orders = {order.id: order for order in sources.blotter.orders}
        fills = [
            FillRow(
                f.id,
                f.order,
                f.bar,
                _time(f.time),
                orders[f.order].symbol,
                orders[f.order].side,
                _shares(Decimal(f.qty)),
                Decimal(f.price),
                Decimal(f.fee),
            )
            for f in sources.blotter.fills
        ]
        # quantities as integers of their finest place (shares, unless a lot is fractional),
        # prices per such unit: every product (a notional, a P&L) is the blotter's exactly
        unit = 10 ** max((_places(f.qty) for f in fills), default=0)
        legs = [
            Leg(
                f.symbol,
                f.bar,
                int(f.qty * unit) if f.side == "buy" else -int(f.qty * unit),
                Fraction(f.price) / unit,
                Fraction(f.fee),
            )
            for f in fills
        ]
        marks = {symbol: Fraction(cs[last]) / unit for symbol, cs in closes.items()}
        trades = [
            TradeRow(
                t.symbol,
                "long" if t.long else "short",
                _shares(Decimal(t.qty) / unit),
                t.entry_bar,
                clock[t.entry_bar],
                t.cost / t.qty * unit,
                t.exit_bar,
                None if t.exit_bar is None else clock[t.exit_bar],
                t.proceeds / t.qty * unit,
                t.pnl,
                t.ret,
                t.fees,
            )
            for t in round_trips(legs, marks)
        ]
    return Ledger(equity, fills, trades)
