"""``avgTrade`` keeps its digits while it takes one logarithm instead of one per trade.

Its digits are defined by the sum of fifty-digit logarithms (``_today`` below, the code a
grade ran before: n ``Decimal.ln``, ≈ 17 ms for a gym episode's 1,135 trades). The grade
now takes the logarithm of the trades' product and decides the 8-place rounding from it
only when an error bound keeps both values on one side of every rounding boundary.

The attack: returns of every shape (tiny, huge, negative down to ``−1 + 10^-k``, a single
trade, tens of thousands), exact ties (a return of exactly ``(k + ½)·10^-8``, trades whose
growths multiply to ``(1 + b)^n`` for a boundary ``b``), and values ``10^-52`` from a
boundary, where the product's 60-digit value and the sum's 50-digit one round apart: any
output (or raised error) that differs from ``_today``'s fails. Without the guard, the
near-tie cases below give other digits for a dozen of them (seen).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from decimal import Context, Decimal, InvalidOperation, localcontext
from fractions import Fraction
from math import prod

import pytest
from kestrel_protocol import ratio
from kestrel_sdk.runtime.engine import geometric
from kestrel_sdk.runtime.engine.geometric import geometric_mean

Returns = list[tuple[int, int]]


def _today(returns: Sequence[tuple[int, int]]) -> str:
    """``avgTrade`` as a grade computed it before: a fifty-digit logarithm per trade."""
    if any(n <= -d for n, d in returns):
        return ratio(Decimal(0))
    with localcontext(Context(prec=50)) as fifty:
        total = sum(((Decimal(d + n) / Decimal(d)).ln() for n, d in returns), Decimal(0))
        return ratio((total / len(returns)).exp() - 1, fifty)


def _outcome(function: Callable[[Returns], str], returns: Returns) -> str:
    try:
        return function(returns)
    except InvalidOperation:
        return "InvalidOperation"


def _lowest(value: Fraction) -> tuple[int, int]:
    return value.numerator, value.denominator


def _random_returns(rng: random.Random) -> Returns:
    count = rng.choice((1, 1, 2, 3, 7, 40, 300, 1200))
    out = []
    for _ in range(count):
        shape = rng.random()
        d = rng.randint(1, 10 ** rng.randint(1, 15))
        if shape < 0.55:  # an ordinary gain or loss
            n = rng.randint(-d + 1, d)
        elif shape < 0.65:  # a huge gain
            n = rng.randint(1, d * 10 ** rng.randint(1, 25))
        elif shape < 0.75:  # nearly all lost
            n = -d + rng.randint(1, max(1, d // 10 ** rng.randint(0, 12)))
        elif shape < 0.9:  # a tiny return
            n = rng.randint(-3, 3)
        else:  # at or past a total loss
            n = rng.randint(-d - 1, -d + 1)
        out.append(_lowest(Fraction(n, d)))
    return out


@pytest.mark.parametrize("seed", range(4))
def test_random_returns_give_todays_digits(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(750):
        returns = _random_returns(rng)
        assert _outcome(geometric_mean, returns) == _outcome(_today, returns), returns


def test_many_trades_give_todays_digits() -> None:
    rng = random.Random(48)
    returns = [
        _lowest(Fraction(rng.randint(-(10**9), 10**9), rng.randint(10**9, 10**11)))
        for _ in range(20_000)
    ]
    assert geometric_mean(returns) == _today(returns)


def _near_ties() -> dict[str, Returns]:
    """Exact ties and values within ``10^-47`` of a rounding boundary ``b = (k + ½)·10^-8``."""
    cases: dict[str, Returns] = {}
    for k in (0, 1, 2, 7, 12345, -1, -2, -99999, 10**8 - 1):
        boundary = Fraction(2 * k + 1, 2 * 10**8)
        for offset in (Fraction(0), *(Fraction(sign, 10**p) for sign in (1, -1) for p in (52, 47))):
            cases[f"one trade, b={boundary}, off by {offset}"] = [_lowest(boundary + offset)]
        for s, t in ((3, 7), (10**9 + 7, 10**9 + 9), (1, 2)):
            grown = (1 + boundary) * Fraction(s, t), (1 + boundary) * Fraction(t, s)
            cases[f"two trades, (1+b)^2, b={boundary}, {s}/{t}"] = [_lowest(g - 1) for g in grown]
        rng = random.Random(k)
        for count in (3, 5, 50):
            factors = [
                Fraction(rng.randint(1, 10**6), rng.randint(1, 10**6)) for _ in range(count - 1)
            ]
            factors.append(1 / prod(factors, start=Fraction(1)))
            cases[f"{count} trades, (1+b)^{count}, b={boundary}"] = [
                _lowest((1 + boundary) * f - 1) for f in factors
            ]
    return cases


@pytest.mark.parametrize(("name", "returns"), sorted(_near_ties().items()))
def test_ties_and_near_ties_give_todays_digits(name: str, returns: Returns) -> None:
    assert geometric_mean(returns) == _today(returns), name


def test_outside_the_bounds_range_it_answers_as_today() -> None:
    huge = [(10**50, 1)]  # a value today's 50-digit quantize cannot hold: it raises
    assert _outcome(geometric_mean, huge) == _outcome(_today, huge) == "InvalidOperation"
    wiped = [(5, 100), (-100, 100)]  # a total loss: 0
    assert geometric_mean(wiped) == _today(wiped) == "0.00000000"


def test_ordinary_returns_take_one_logarithm(monkeypatch: pytest.MonkeyPatch) -> None:
    """The near-tie path (the sum of logarithms) answers only near a boundary."""
    summed: list[Returns] = []
    by_sum = geometric._by_sum

    def counted(returns: Returns) -> str:
        summed.append(returns)
        return by_sum(returns)

    monkeypatch.setattr(geometric, "_by_sum", counted)
    rng = random.Random(7)
    for _ in range(200):
        geometric_mean(_random_returns(rng))
    assert summed == []
    tie = [(1, 200_000_000)]  # exactly 0.000000005: half-even decides, from today's sum
    assert geometric_mean(tie) == "0.00000000"
    assert summed == [tie]
