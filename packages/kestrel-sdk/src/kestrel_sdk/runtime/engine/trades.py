"""Round-trip trades of a session and their statistics (the grade's trade metrics).

A trade is one round trip of one symbol: it opens when the position leaves zero and
closes when it returns to zero. Adding to a position or reducing it without reaching
zero stays within the trade; a fill that crosses zero closes the trade and opens the
next one with the rest, its fee split between them by shares (exactly, as a fraction).
A trade's net P&L is its cash flows, ``Σ −signed qty × price − fee``; its return is that
P&L over its entry notional (``Σ |qty × price|`` of the fills that opened or grew it), as
backtesting.py's ``Trade.pl_pct``. A position still open when the session ends counts as
a trade marked at the last processed bar's close, without an exit fee.

Exact arithmetic: cash flows are fractions (of P units in a grade, of the blotter's
decimals in :mod:`kestrel_sdk.results`); only the geometric mean
(:mod:`.geometric`) uses ``Decimal.ln``/``exp``, which are correctly rounded and so the
same on every machine.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from math import gcd
from typing import NamedTuple

from .geometric import geometric_mean
from .scaled import div_round_half_even, scaled_text

__all__ = ["Leg", "Legs", "Trade", "round_trips", "trade_metrics", "trips_metrics"]

Exact = Fraction | int
"""An exact number: the runtime's P units are integers, the blotter's decimals fractions."""


class Leg(NamedTuple):
    """One fill as a trade sees it: ``delta`` is the signed quantity (a buy positive),
    ``price`` and ``fee`` exact (the runtime's P units, integers, or the blotter's
    decimals as fractions). A tuple, made at a third of a frozen dataclass's cost (a
    grade passes plain tuples of the same members: :data:`Legs`)."""

    symbol: str
    bar: int
    delta: int
    price: Exact
    fee: Exact


Legs = Iterable[tuple[str, int, int, Exact, Exact]]
"""Legs as the round trips read them: each a :class:`Leg` or a plain tuple of its five
members (a grade makes one per fill, and a tuple is made at a tenth of a named tuple's
cost: 0.4 ms of a gym episode's grade)."""


@dataclass(frozen=True, slots=True)
class Trade:
    """A finished (or end-of-session marked) round trip, in the units of its legs: net
    P&L, entry notional ``cost``, exit notional ``proceeds`` (shares exited × price, the
    mark for a trade still open), shares entered ``qty`` (= shares exited), fees, and the
    bars it opened and closed at (``exit_bar`` ``None`` when still open at the end)."""

    symbol: str
    pnl: Fraction
    cost: Fraction
    long: bool
    qty: int
    proceeds: Fraction
    fees: Fraction
    entry_bar: int
    exit_bar: int | None

    @property
    def ret(self) -> Fraction:
        return self.pnl / self.cost


def _fraction(value: Exact) -> Fraction:
    return value if value.__class__ is Fraction else Fraction(value)


class _Open:
    """A trade still open; its sums exact: numerators over ``den``, which is 1 unless
    the fill that opened it crossed zero (its fee split by shares with the trade it
    closed: then its shares), integers while its legs' are. So splitting a fee costs
    no fraction arithmetic: a trade's amounts become fractions once, when it is done."""

    __slots__ = ("bar", "cost", "den", "exit_bar", "fees", "long", "pnl", "proceeds", "qty", "size")

    def __init__(self, bar: int, price: Exact, qty: int, fee: Exact, den: int = 1) -> None:
        """Opened at ``bar`` by ``qty`` of a leg at ``price`` with ``fee`` (over ``den``)
        of its fee."""
        self.qty = qty
        self.long = qty > 0
        self.bar = bar
        self.size = abs(qty)
        self.den = den
        self.cost: Exact = abs(qty) * price * den
        self.proceeds: Exact = 0
        self.fees = fee
        self.pnl: Exact = -qty * price * den - fee
        self.exit_bar: int | None = None  # the bar it closed at; None while open

    def done(self, symbol: str) -> Trade:
        den = self.den
        if den == 1:
            pnl, cost = _fraction(self.pnl), _fraction(self.cost)
            proceeds, fees = _fraction(self.proceeds), _fraction(self.fees)
        else:
            pnl, cost = Fraction(self.pnl, den), Fraction(self.cost, den)
            proceeds, fees = Fraction(self.proceeds, den), Fraction(self.fees, den)
        return Trade(
            symbol, pnl, cost, self.long, self.size, proceeds, fees, self.bar, self.exit_bar
        )


def _finished(legs: Legs, marks: Mapping[str, Fraction]) -> Iterator[tuple[str, _Open]]:
    """The round trips of ``legs`` (in booking order) as each finishes, by symbol: closed
    ones in the order they closed (``exit_bar`` set), then any still open marked at
    ``marks`` (by symbol, in the legs' units; ``exit_bar`` ``None``)."""
    live: dict[str, _Open] = {}
    for symbol, bar, delta, price, fee in legs:
        trip = live.get(symbol)
        if trip is None:
            live[symbol] = _Open(bar, price, delta, fee)
            continue
        den = trip.den
        if (trip.qty > 0) == (delta > 0):
            size = delta if delta > 0 else -delta
            trip.qty += delta
            trip.size += size
            trip.cost += size * price * den
            trip.fees += fee * den
            trip.pnl -= (delta * price + fee) * den
            continue
        size = abs(delta)
        closing = min(size, abs(trip.qty))
        closing_delta = closing if delta > 0 else -closing
        if closing == size:
            fee_part = fee * den
        else:  # the fill crosses zero: its fee's share here is fee × closing / size
            trip.pnl *= size
            trip.proceeds *= size
            trip.fees *= size
            trip.cost *= size
            fee_part = fee * closing * den
            den = trip.den = den * size
        trip.pnl -= closing_delta * price * den + fee_part
        trip.proceeds += closing * price * den
        trip.fees += fee_part
        trip.qty += closing_delta
        if trip.qty == 0:
            trip.exit_bar = bar
            yield symbol, trip
            del live[symbol]
            rest = delta - closing_delta
            if rest:  # the rest of the fee, over the fill's shares
                live[symbol] = _Open(bar, price, rest, fee * (size - closing), size)
    for symbol, trip in live.items():
        mark = marks[symbol] * trip.den
        trip.pnl += trip.qty * mark
        trip.proceeds += abs(trip.qty) * mark
        yield symbol, trip


def round_trips(legs: Legs, marks: Mapping[str, Fraction]) -> list[Trade]:
    """The round trips of ``legs`` (in booking order), closed ones in the order they
    closed, then any still open marked at ``marks`` (by symbol, in the legs' units)."""
    return [trip.done(symbol) for symbol, trip in _finished(legs, marks)]


Ratio = tuple[int, int]
"""An exact return as its numerator and denominator in lowest terms, the denominator
positive: a tuple of integers, which the cycle collector stops tracking at its first
collection (a fraction is an object it tracks)."""


def trips_metrics(legs: Legs, marks: Mapping[str, Fraction]) -> dict[str, object]:
    """:func:`trade_metrics` of :func:`round_trips` of ``legs`` and ``marks`` (a grade's),
    without a :class:`Trade` of each: a trade's return is its P&L over its entry
    notional, both over one denominator, so the quotient of their numerators, where a
    trade's four amounts as fractions and their quotient cost five (a gym episode's
    1,100 trades were ≈ 4 ms of fraction arithmetic, and 2,000 objects the collector
    moved to its oldest generation while the grade's logarithms ran)."""
    returns: list[Ratio] = []
    wins = 0
    for _, trip in _finished(legs, marks):
        returns.append(_lowest(trip.pnl, trip.cost))
        if trip.pnl > 0:
            wins += 1
    return _metrics(returns, wins)


def _lowest(numerator: Exact, denominator: Exact) -> Ratio:
    """``numerator / denominator`` as a :data:`Ratio` (``Fraction(numerator,
    denominator)``'s numerator and denominator; a zero denominator raises as it does)."""
    if numerator.__class__ is int and denominator.__class__ is int and denominator:
        shared = gcd(numerator, denominator)
        if denominator < 0:
            shared = -shared
        return numerator // shared, denominator // shared
    value = Fraction(numerator, denominator)
    return value.numerator, value.denominator


def _sum(values: Sequence[Ratio]) -> Ratio:
    """The exact sum of ``values``, never reduced (a fraction's sum reduces at every
    addition, in Python; the metrics read the sums only through :func:`_ratio`, whose
    rounding is the quotient's, however written): added in pairs, then the pairs' sums
    in pairs, and so on, so the numbers multiplied stay small until the last additions
    (added one by one over a common denominator, that denominator was hundreds of digits
    long for most of a gym episode's additions: its two sums 1.36 -> 0.74 ms; and the
    gcds of thousand-digit sums, reduced and then added and divided as fractions, were
    ≈ 0.2 ms more). The denominator is positive."""
    level = list(values)
    if not level:
        return 0, 1
    while len(level) > 1:
        paired: list[Ratio] = []
        pairs = zip(level[::2], level[1::2], strict=False)  # an odd one out goes up as it is
        for (top, bottom), (numerator, denominator) in pairs:
            shared = gcd(bottom, denominator)
            if shared == 1:
                paired.append((top * denominator + numerator * bottom, bottom * denominator))
            else:
                scale = denominator // shared
                paired.append((top * scale + numerator * (bottom // shared), bottom * scale))
        if len(level) % 2:
            paired.append(level[-1])
        level = paired
    return level[0]


def _extreme(values: Sequence[Ratio], sign: int) -> Ratio:
    """The largest of ``values`` (``sign`` 1) or the smallest (-1), compared by their
    numerators and denominators in integers."""
    found = values[0]
    top, bottom = found[0] * sign, found[1]
    for value in values:
        numerator, denominator = value
        numerator *= sign
        if numerator * bottom > top * denominator:
            found, top, bottom = value, numerator, denominator
    return found


def _ratio(numerator: int, denominator: int) -> str:
    """An exact quotient as a ratio: 8 places, half-even."""
    return scaled_text(div_round_half_even(numerator * 10**8, denominator), 8)


def trade_metrics(trips: Sequence[Trade]) -> dict[str, object]:
    """``trades``, ``winRate``, ``bestTrade``, ``worstTrade``, ``avgTrade`` (geometric),
    ``profitFactor`` and ``expectancy`` (arithmetic mean return) of ``trips``; every
    ratio ``None`` without trades, ``profitFactor`` ``None`` without a losing trade."""
    returns = [(r.numerator, r.denominator) for r in (t.ret for t in trips)]
    # a fraction's sign is its numerator's (its denominator is positive)
    return _metrics(returns, sum(1 for t in trips if t.pnl.numerator > 0))


def _metrics(returns: Sequence[Ratio], wins: int) -> dict[str, object]:
    """:func:`trade_metrics` of trades whose returns are ``returns``, ``wins`` of them
    with a positive P&L."""
    if not returns:
        return {
            "trades": 0,
            "winRate": None,
            "bestTrade": None,
            "worstTrade": None,
            "avgTrade": None,
            "profitFactor": None,
            "expectancy": None,
        }
    # a return's sign is its numerator's (its denominator is positive)
    gains, gains_den = _sum([r for r in returns if r[0] > 0])
    losses, losses_den = _sum([r for r in returns if r[0] < 0])  # losses <= 0
    count = len(returns)
    return {
        "trades": count,
        "winRate": _ratio(wins, count),
        "bestTrade": _ratio(*_extreme(returns, 1)),
        "worstTrade": _ratio(*_extreme(returns, -1)),
        "avgTrade": geometric_mean(returns),
        "profitFactor": _ratio(gains * losses_den, -losses * gains_den) if losses else None,
        # the returns' sum, exactly
        "expectancy": _ratio(
            gains * losses_den + losses * gains_den, gains_den * losses_den * count
        ),
    }
