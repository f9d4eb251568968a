"""Round trips are exact whichever exact numbers their legs carry: a grade passes the
runtime's integer P units, the SDK's ledger the blotter's decimals as fractions, and both
give the same trades, every amount a ``Fraction`` (integers are summed as integers until
a fee is split, which made a gym episode's 1,100 trades cost 17 ms of fraction
arithmetic).

The attack: legs that flip a position through zero (each flip splits a fee between the
trade it closes and the one it opens), grow and shrink it, on two symbols, one still
open at the end; any amount that differs, or that is not a fraction (an integer's true
division is a float), fails.
"""

from __future__ import annotations

import random
from decimal import Context, Decimal, localcontext
from fractions import Fraction
from typing import Any

import pytest
from kestrel_protocol import ratio
from kestrel_sdk.runtime.engine.trades import (
    Leg,
    Trade,
    round_trips,
    trade_metrics,
    trips_metrics,
)


def _legs(seed: int) -> list[tuple[str, int, int, int, int]]:
    rng = random.Random(seed)
    held = {"ACME": 0, "BETA": 0}
    legs = []
    for bar in range(1, 1200):
        symbol = rng.choice(("ACME", "BETA"))
        size = rng.randint(1, 4000)
        target = rng.choice((-size, 0, size, held[symbol] + rng.randint(-50, 50)))
        delta = target - held[symbol]
        if delta:
            held[symbol] = target
            price = rng.randint(10**6, 10**8)
            legs.append((symbol, bar, delta, price, rng.randint(0, price // 97)))
    return legs


def _members(trade: Trade) -> tuple[object, ...]:
    return tuple(getattr(trade, name) for name in Trade.__slots__)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_integer_legs_make_the_trades_fraction_legs_make(seed: int) -> None:
    legs = _legs(seed)
    marks = {"ACME": Fraction(123456789, 7), "BETA": Fraction(5555)}
    whole = round_trips([Leg(*leg) for leg in legs], marks)
    exact = round_trips([Leg(s, b, d, Fraction(p), Fraction(f)) for s, b, d, p, f in legs], marks)
    assert len(whole) > 300
    assert any(t.exit_bar is None for t in whole)  # a trade still open, marked
    assert [_members(t) for t in whole] == [_members(t) for t in exact]
    for trade in whole:
        for amount in (trade.pnl, trade.cost, trade.proceeds, trade.fees, trade.ret):
            assert type(amount) is Fraction
    assert trade_metrics(whole) == trade_metrics(exact)


def _naive_metrics(trips: list[Trade]) -> dict[str, object]:
    """The trade metrics by their definitions, one fraction operation at a time."""

    def eight(value: Fraction) -> str:
        with localcontext(Context(prec=200)) as wide:
            return ratio(Decimal(value.numerator) / Decimal(value.denominator), wide)

    returns = [t.pnl / t.cost for t in trips]
    gains = sum((r for r in returns if r > 0), Fraction(0))
    losses = -sum((r for r in returns if r < 0), Fraction(0))
    with localcontext(Context(prec=50)) as fifty:
        grown = [1 + r for r in returns]
        logs = sum(
            ((Decimal(g.numerator) / Decimal(g.denominator)).ln() for g in grown), Decimal(0)
        )
        average = ratio((logs / len(returns)).exp() - 1, fifty)
    return {
        "trades": len(returns),
        "winRate": eight(Fraction(sum(1 for t in trips if t.pnl > 0), len(trips))),
        "bestTrade": eight(max(returns)),
        "worstTrade": eight(min(returns)),
        "avgTrade": average,
        "profitFactor": eight(gains / losses),
        "expectancy": eight((gains - losses) / len(returns)),
    }


def _walked_legs(seed: int) -> list[Leg]:
    """Legs at prices that move a few percent a bar (no trade loses all it cost)."""
    rng = random.Random(seed)
    held, price, legs = 0, 10**7, []
    for bar in range(1, 2500):
        price += rng.randint(-price // 40, price // 40)
        target = rng.choice((-1, 0, 1)) * rng.randint(1, 4000)
        if target != held:
            legs.append(Leg("ACME", bar, target - held, price, rng.randint(0, price // 997)))
            held = target
    return legs


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_trade_metrics_are_their_definitions(seed: int) -> None:
    """The metrics' sums over a common denominator, signs read from numerators and
    ``1 + r`` written as ``(d + n) / d`` give what the definitions give, one fraction
    operation at a time (rounded to 8 places half-even)."""
    trips = round_trips(_walked_legs(seed), {"ACME": Fraction(123456789, 7)})
    assert len(trips) > 1000
    assert any(t.pnl > 0 for t in trips)
    assert any(t.pnl < 0 for t in trips)
    assert all(t.pnl > -t.cost for t in trips)  # every 1 + r positive: its logarithm is taken
    assert trade_metrics(trips) == _naive_metrics(trips)


def _reference_round_trips(legs: list[Leg], marks: dict[str, Fraction]) -> list[Trade]:
    """Round trips by their definition, every amount a fraction from the start (a fill
    crossing zero splits its fee by shares)."""
    trips: list[Trade] = []
    live: dict[str, dict[str, Any]] = {}
    for leg in legs:
        price, fee = Fraction(leg.price), Fraction(leg.fee)
        trip = live.get(leg.symbol)
        if trip is not None and (trip["qty"] > 0) == (leg.delta > 0):
            trip["qty"] += leg.delta
            trip["size"] += abs(leg.delta)
            trip["cost"] += abs(leg.delta) * price
            trip["fees"] += fee
            trip["pnl"] -= leg.delta * price + fee
            continue
        opening = leg.delta
        if trip is not None:
            closing = min(abs(leg.delta), abs(trip["qty"]))
            signed = closing if leg.delta > 0 else -closing
            part = fee * closing / abs(leg.delta)
            trip["pnl"] -= signed * price + part
            trip["proceeds"] += closing * price
            trip["fees"] += part
            trip["qty"] += signed
            if trip["qty"]:
                continue
            trips.append(_trade(leg.symbol, trip, leg.bar))
            del live[leg.symbol]
            opening, fee = leg.delta - signed, fee - part
        if opening:
            live[leg.symbol] = {
                "qty": opening,
                "size": abs(opening),
                "cost": abs(opening) * price,
                "proceeds": Fraction(0),
                "fees": fee,
                "pnl": -opening * price - fee,
                "bar": leg.bar,
                "long": opening > 0,
            }
    for symbol, trip in live.items():
        trip["pnl"] += trip["qty"] * marks[symbol]
        trip["proceeds"] += abs(trip["qty"]) * marks[symbol]
        trips.append(_trade(symbol, trip, None))
    return trips


def _trade(symbol: str, trip: dict[str, Any], exit_bar: int | None) -> Trade:
    return Trade(
        symbol,
        trip["pnl"],
        trip["cost"],
        trip["long"],
        trip["size"],
        trip["proceeds"],
        trip["fees"],
        trip["bar"],
        exit_bar,
    )


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_round_trips_are_their_definition(seed: int) -> None:
    """Sums kept as integers over a trade's own denominator (its opening fill's shares,
    when that fill crossed zero) give the trades the definition gives in fractions:
    flips through zero, grown and shrunk positions, two symbols, one still open."""
    legs = [Leg(*leg) for leg in _legs(seed)] + _walked_legs(seed)
    marks = {"ACME": Fraction(123456789, 7), "BETA": Fraction(5555)}
    expected = _reference_round_trips(legs, marks)
    assert sum(1 for t in expected if t.fees.denominator > 1) > 100  # split fees
    assert [_members(t) for t in round_trips(legs, marks)] == [_members(t) for t in expected]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_grades_trade_metrics_are_those_of_its_trades(seed: int) -> None:
    """A grade's trade metrics, measured from its legs without a trade object each
    (a return one fraction of the trade's P&L and entry notional over their common
    denominator, a win read from the P&L's sign), are the definitions' of the trades:
    fees split by flips through zero, two symbols, one trade still open, legs in
    integers or in fractions."""
    walked = _walked_legs(seed)
    marks = {"ACME": Fraction(123456789, 7), "BETA": Fraction(5555)}
    assert trips_metrics(walked, marks) == _naive_metrics(_reference_round_trips(walked, marks))
    legs = _legs(seed)
    whole = [Leg(*leg) for leg in legs]
    exact = [Leg(s, b, d, Fraction(p), Fraction(f)) for s, b, d, p, f in legs]
    expected = trade_metrics(_reference_round_trips(whole, marks))
    assert trips_metrics(whole, marks) == expected
    assert trips_metrics(exact, marks) == expected
    assert trips_metrics([], marks) == trade_metrics([])
