"""A trader's own books of a session, kept from what it shows: the tape, the events of
its frames in order and its blotter, each rule taken from docs/engine.md and computed
again in plain decimals (never through the engine's code).

:func:`audit` walks the events bar by bar and returns every way the session departed
from the documented rules (empty when none): fill prices (a market order at the slipped
open, a stand-down's at the close), fees, the rejections' reasons, buying power and
margin calls on a margin account (the call at the close the rule names, its liquidation
at the next open), interest and borrow cost, and each frame's account and positions.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from decimal import ROUND_CEILING, ROUND_DOWN, ROUND_FLOOR, ROUND_HALF_EVEN, Decimal
from fractions import Fraction
from typing import Any

from kestrel_sdk.runtime.catalog.model import LoadedScenario

__all__ = ["Books", "Market", "audit", "target_problems"]

Json = Mapping[str, Any]
CENT = Decimal("0.01")
YEAR = 365 * 24 * 3600


def _cents(value: Fraction | Decimal) -> Decimal:
    exact = Fraction(value)
    return (Decimal(exact.numerator) / Decimal(exact.denominator)).quantize(
        CENT, rounding=ROUND_HALF_EVEN
    )


@dataclass(frozen=True)
class Market:
    """A scenario's tape (open, high, low, close by symbol and bar) and terms, in decimals."""

    bars: dict[str, list[tuple[Decimal, Decimal, Decimal, Decimal]]]
    seconds: list[int]
    lots: dict[str, Decimal]
    ticks: dict[str, Decimal]
    cash: Decimal
    shortable: bool
    max_position: Decimal
    fee_bps: Decimal
    fee_minimum: Decimal
    slippage_bps: Decimal
    margin: bool
    leverage: Decimal
    maintenance: Decimal
    cash_rate: Fraction
    borrow_rate: Fraction

    @classmethod
    def of(cls, loaded: LoadedScenario) -> Market:
        sc, tape = loaded.scenario, loaded.tape
        unit = Decimal(10) ** -tape.scale
        bars = {
            symbol: [
                (c.open[i] * unit, c.high[i] * unit, c.low[i] * unit, c.close[i] * unit)
                for i in range(len(tape))
            ]
            for symbol, c in tape.columns.items()
        }
        account = sc.account
        return cls(
            bars=bars,
            seconds=[int(datetime.fromisoformat(t).timestamp()) for t in tape.times],
            lots={i.symbol: Decimal(str(i.lot)) for i in sc.instruments},
            ticks={i.symbol: Decimal(i.tick) for i in sc.instruments},
            cash=Decimal(account.cash),
            shortable=account.shortable,
            max_position=Decimal(account.max_position),
            fee_bps=Decimal(sc.fees.bps),
            fee_minimum=Decimal(sc.fees.minimum),
            slippage_bps=Decimal(sc.fill.slippage_bps),
            margin=account.kind == "margin",
            leverage=Decimal(account.leverage or "1"),
            maintenance=Decimal(account.maintenance_margin or "1"),
            cash_rate=Fraction(account.cash_rate or "0"),
            borrow_rate=Fraction(account.borrow_rate or "0"),
        )

    def fee(self, notional: Decimal) -> Decimal:
        """``max(minimum, notional × bps / 10000)``, the fee rounded half-even to the cent."""
        return max(self.fee_minimum, _cents(notional * self.fee_bps / 10000))

    def at_open(self, symbol: str, j: int, buy: bool) -> Decimal:
        """A market order's price at bar ``j``: the open moved ``slippage_bps`` against
        the order, rounded to the tick against it, capped at the high (buy) or low."""
        o, h, lo, _ = self.bars[symbol][j]
        tick = self.ticks[symbol]
        if buy:
            moved = (o * (1 + self.slippage_bps / 10000) / tick).to_integral_value(ROUND_CEILING)
            return min(moved * tick, h)
        moved = (o * (1 - self.slippage_bps / 10000) / tick).to_integral_value(ROUND_FLOOR)
        return max(moved * tick, lo)


@dataclass
class Books:
    """Cash and positions, booked fill by fill, accrued and checked bar by bar."""

    market: Market
    cash: Decimal
    positions: dict[str, Decimal] = field(default_factory=dict)
    interest: Fraction = Fraction(0)
    borrow: Fraction = Fraction(0)
    posted: tuple[Decimal, Decimal] = (Decimal(0), Decimal(0))
    series: list[Decimal] = field(default_factory=list)
    holding: list[bool] = field(default_factory=list)
    calls: list[int] = field(default_factory=list)

    def marked(self, marks: Mapping[str, Decimal]) -> tuple[Decimal, Decimal]:
        """(equity, gross exposure) at ``marks``."""
        equity, gross = self.cash, Decimal(0)
        for symbol, qty in self.positions.items():
            equity += qty * marks[symbol]
            gross += abs(qty) * marks[symbol]
        return equity, gross

    def closes(self, j: int) -> dict[str, Decimal]:
        return {symbol: bars[j][3] for symbol, bars in self.market.bars.items()}

    def accrue(self, j: int) -> None:
        """Bar ``j``'s interest on cash and borrow cost on shorts (at bar j − 1's closes),
        the cash moved by each exact sum's change to the cent."""
        market = self.market
        if not (market.cash_rate or market.borrow_rate):
            return
        elapsed = market.seconds[j] - market.seconds[j - 1]
        closes = self.closes(j - 1)
        self.interest += Fraction(self.cash) * market.cash_rate * elapsed / YEAR
        short = sum((-q * closes[s] for s, q in self.positions.items() if q < 0), Decimal(0))
        self.borrow += Fraction(short) * market.borrow_rate * elapsed / YEAR
        interest, borrow = _cents(self.interest), _cents(self.borrow)
        self.cash += interest - self.posted[0] - (borrow - self.posted[1])
        self.posted = (interest, borrow)

    def book(self, symbol: str, delta: Decimal, price: Decimal, fee: Decimal) -> None:
        self.cash -= delta * price + fee
        after = self.positions.get(symbol, Decimal(0)) + delta
        if after:
            self.positions[symbol] = after
        else:
            self.positions.pop(symbol, None)

    def close_of(self, j: int) -> None:
        """Bar ``j``'s close: the equity point, and a margin call when ``E < m × G``."""
        equity, gross = self.marked(self.closes(j))
        self.series.append(equity)
        self.holding.append(bool(self.positions))
        if self.market.margin and j and self.positions and equity < self.market.maintenance * gross:
            self.calls.append(j)


def _qty(value: int | str) -> Decimal:
    return Decimal(str(value))


def _lot_text(problems: list[str], market: Market, symbol: str, text: int | str) -> None:
    """A quantity is a multiple of its lot, and an integer on a scenario of whole lots,
    else its decimal text (canonical: no exponent, no trailing zeros), never a float."""
    fractional = any(lot != lot.to_integral_value() for lot in market.lots.values())
    if isinstance(text, str) != fractional or isinstance(text, float):
        problems.append(f"{symbol} quantity {text!r} is not of the scenario's one type")
    qty = _qty(text)
    if qty % market.lots[symbol]:
        problems.append(f"{symbol} quantity {text} is not a multiple of its lot")
    if isinstance(text, str) and text != f"{qty.normalize():f}":
        problems.append(f"quantity text {text!r} is not canonical")


def _allows(
    books: Books, j: int, *, symbol: str, delta: Decimal, price: Decimal, fee: Decimal
) -> bool:
    """Buying power: after the fill ``G ≤ E × L`` (the fill's symbol at its price, the
    others at bar j − 1's close), or the fill does not raise ``G``."""
    marks = {**books.closes(j - 1), symbol: price}
    _, before = books.marked(marks)
    held = books.positions.get(symbol, Decimal(0))
    after_books = Books(books.market, books.cash - delta * price - fee, dict(books.positions))
    after_books.positions[symbol] = held + delta
    equity, gross = after_books.marked(marks)
    return gross <= before or gross <= equity * books.market.leverage


def audit(market: Market, frames: Sequence[Json], blotter: Json) -> tuple[list[str], Books]:
    """Every departure of the session from the documented rules, and the books kept."""
    orders = {o["id"]: o for o in blotter["orders"]}
    books = Books(market, market.cash)
    problems: list[str] = []
    bar, closed = 0, False
    called: list[int] = []
    liquidating: int | None = None

    def to_bar(j: int) -> None:
        nonlocal bar, closed, liquidating
        while bar < j:
            if liquidating == bar and books.positions:
                problems.append(f"bar {bar}: the margin call's positions were not closed")
            if not closed:
                books.close_of(bar)
            bar, closed = bar + 1, False
            books.accrue(bar)
            if books.calls and books.calls[-1] == bar - 1:
                liquidating = bar

    for frame in frames:
        for event in frame["events"]:
            kind, j = event["type"], event["bar"]
            to_bar(j)
            order = orders.get(event.get("order", ""), {})
            runtime = order.get("line") == 0
            if kind == "margin-call":
                called.append(j)
            elif kind == "accepted" and runtime and order["reason"] == "stand-down" and not closed:
                books.close_of(j)  # the close's check comes before a stand-down's orders
                closed = True
            elif kind == "fill":
                symbol, buy = order["symbol"], order["side"] == "buy"
                qty, price, fee = _qty(event["qty"]), Decimal(event["price"]), Decimal(event["fee"])
                _lot_text(problems, market, symbol, event["qty"])
                delta = qty if buy else -qty
                if order.get("reason") == "margin-call":
                    if liquidating != j or books.positions.get(symbol) != -delta:
                        problems.append(f"bar {j}: {order['id']} liquidates out of turn")
                    if price != market.at_open(symbol, j, buy):
                        problems.append(f"bar {j}: liquidation of {symbol} at {price}")
                elif runtime:  # a stand-down's, at the clock bar's close
                    if price != market.bars[symbol][j][3]:
                        problems.append(f"bar {j}: stand-down of {symbol} at {price}")
                else:
                    if liquidating == j and books.positions:
                        problems.append(f"bar {j}: {order['id']} matched before the liquidation")
                    if order["type"] == "market" and price != market.at_open(symbol, j, buy):
                        problems.append(f"bar {j}: market {order['id']} filled at {price}")
                    after = books.positions.get(symbol, Decimal(0)) + delta
                    if abs(after) > market.max_position:
                        problems.append(f"bar {j}: {order['id']} beyond max_position")
                    if after < 0 and not market.shortable:
                        problems.append(f"bar {j}: {order['id']} went short")
                    if market.margin:
                        if not _allows(books, j, symbol=symbol, delta=delta, price=price, fee=fee):
                            problems.append(f"bar {j}: {order['id']} beyond buying power")
                    elif buy and books.cash < qty * price + fee:
                        problems.append(f"bar {j}: {order['id']} bought beyond cash")
                if fee != market.fee(qty * price):
                    problems.append(f"bar {j}: fee {fee} on {qty} at {price}")
                books.book(symbol, delta, price, fee)
            elif kind == "rejected" and order["type"] == "market":
                symbol, buy = order["symbol"], order["side"] == "buy"
                qty = _qty(event["qty"])
                price = market.at_open(symbol, j, buy)
                fee = market.fee(qty * price)
                delta = qty if buy else -qty
                after = books.positions.get(symbol, Decimal(0)) + delta
                reason = event["reason"]
                if not market.shortable and after < 0:
                    due = "not-shortable"
                elif abs(after) > market.max_position:
                    due = "max-position"
                elif market.margin:
                    allowed = _allows(books, j, symbol=symbol, delta=delta, price=price, fee=fee)
                    due = "" if allowed else "insufficient-margin"
                else:
                    due = "insufficient-cash" if buy and books.cash < qty * price + fee else ""
                if reason != due:
                    problems.append(f"bar {j}: {order['id']} rejected {reason}, the rules: {due}")
        to_bar(frame["clock"]["bar"])
        problems += _frame_problems(market, books, frame)
    if not closed:
        books.close_of(bar)
    else:
        books.series[-1] = books.marked(books.closes(bar))[0]  # after the stand-down
    if called != books.calls:
        problems.append(f"margin calls at bars {called}, the rule's: {books.calls}")
    return problems, books


def _frame_problems(market: Market, books: Books, frame: Json) -> list[str]:
    seq, bar = frame["seq"], frame["clock"]["bar"]
    account = frame["account"]
    shown = {p["symbol"]: _qty(p["qty"]) for p in frame["positions"]}
    problems = []
    if shown != books.positions:
        problems.append(f"frame {seq}: positions {shown}, the fills': {books.positions}")
    for position in frame["positions"]:
        _lot_text(problems, market, position["symbol"], position["qty"])
    equity = books.marked(books.closes(bar))[0]
    if Decimal(account["equity"]) != _cents(equity) or Decimal(account["cash"]) != _cents(
        books.cash
    ):
        problems.append(f"frame {seq}: equity {account['equity']}, cash {account['cash']}")
    if {s: Decimal(m) for s, m in frame["marks"].items()} != books.closes(bar):
        problems.append(f"frame {seq}: marks are not bar {bar}'s closes")
    # equity = start + realized + unrealized − fees (+ interest − borrow on a margin account)
    accrued = books.posted[0] - books.posted[1]
    books_total = Decimal(account["realized"]) + Decimal(account["unrealized"])
    identity = market.cash + books_total - Decimal(account["fees"]) + accrued
    if abs(identity - Decimal(account["equity"])) > Decimal("0.02"):
        problems.append(f"frame {seq}: equity {account['equity']} is not start + R + U − F")
    if not market.margin and not market.shortable and Decimal(account["cash"]) < 0:
        problems.append(f"frame {seq}: cash {account['cash']} below zero")
    return problems


def target_problems(market: Market, frames: Sequence[Json], blotter: Json) -> list[str]:
    """Each target order's quantity against docs/engine.md ("Target"), for those placed
    before any ``advance`` of their source (the frame before it shows the clock bar)."""
    by_seq = {frame["seq"]: frame for frame in frames}
    problems = []
    for order in blotter["orders"]:
        target = order.get("target")
        before = by_seq.get(order["seq"] - 1)
        if target is None or before is None or before["clock"]["bar"] != order["submittedBar"]:
            continue
        symbol = order["symbol"]
        held = {p["symbol"]: _qty(p["qty"]) for p in before["positions"]}.get(symbol, Decimal(0))
        if target.endswith("%"):
            lot = market.lots[symbol]
            equity, close = Decimal(before["account"]["equity"]), Decimal(before["marks"][symbol])
            # the equity shown is to the cent: either side of it may be the exact one
            wanted = {
                (Decimal(target[:-1]) / 100 * e / close / lot).to_integral_value(ROUND_DOWN) * lot
                for e in (equity - CENT / 2, equity, equity + CENT / 2)
            }
        else:
            wanted = {Decimal(target)}
        buy = order["side"] == "buy"
        allowed = {max(w - held, Decimal(0)) if buy else max(held - w, Decimal(0)) for w in wanted}
        qty = _qty(order["qty"])
        if qty not in allowed:
            problems.append(f"{order['id']} {target}: qty {qty}, the rule's {sorted(allowed)}")
        if not qty and order.get("reason") != "at-target":
            problems.append(f"{order['id']} {target}: an empty order not cancelled at-target")
    return problems
