"""Round-trip trades and the grade's trade statistics, worked by hand."""

from __future__ import annotations

import math
from decimal import Decimal
from fractions import Fraction

from kestrel_sdk.runtime.engine import compute_grade

from tests.kestrel_sdk.runtime.engine.replay import run_session
from tests.kestrel_sdk.runtime.engine.tapes import daily


def _bars(*prices: str) -> list[tuple[str, str, str, str]]:
    return [(p, p, p, p) for p in prices]


def _ratio(value: Fraction) -> str:
    """8 places, half-even (``round`` on a Fraction rounds half to even)."""
    return f"{Decimal(round(value * 10**8)).scaleb(-8):f}"


def test_scale_in_flip_and_an_open_trade_at_the_end() -> None:
    loaded = daily(_bars("100", "100", "110", "120", "100", "90", "90"), bps="10", shortable=True)
    sources = [
        "buy 10 ACME\nadvance",  # bar 1 at 100, fee 1.00
        "buy 10 ACME\nadvance",  # bar 2 at 110, fee 1.10: the same trade grows
        "sell 30 ACME\nadvance",  # bar 3 at 120, fee 3.60: closes 20 (2.40), opens -10 (1.20)
        "buy 10 ACME\nadvance",  # bar 4 at 100, fee 1.00: the short closes
        "buy 5 ACME\nadvance",  # bar 5 at 90, fee 0.45: still open at the end
    ]
    _, pentads, record = run_session(loaded, sources)
    m = compute_grade(loaded, record, pentads).metrics
    first = Fraction("295.50") / 2100  # 2400 − 1000 − 1100 − 1.00 − 1.10 − 2.40 over 2100
    second = Fraction("197.80") / 1200  # 1200 − 1000 − 1.20 − 1.00 over 1200
    third = Fraction("-0.45") / 450  # marked at the last close 90, no exit fee
    returns = [first, second, third]
    assert m.trades == 3
    assert m.win_rate == "0.66666667"
    assert m.best_trade == _ratio(second) == "0.16483333"
    assert m.worst_trade == _ratio(third) == "-0.00100000"
    assert m.expectancy == _ratio(sum(returns, Fraction(0)) / 3)
    assert m.profit_factor == _ratio((first + second) / -third)
    geometric = math.prod(1 + float(r) for r in returns) ** (1 / 3) - 1
    assert m.avg_trade is not None
    assert abs(float(m.avg_trade) - geometric) < 1e-8
    assert m.buy_and_hold == "-0.10000000"  # 100 → 90 over bars 0…5


def test_statistics_without_trades_are_null_and_without_losses_profit_factor_is() -> None:
    loaded = daily(_bars("100", "100", "100", "101"))
    _, pentads, record = run_session(loaded, ["advance 3"])
    m = compute_grade(loaded, record, pentads).metrics
    assert (m.trades, m.win_rate, m.best_trade, m.worst_trade) == (0, None, None, None)
    assert (m.avg_trade, m.profit_factor, m.expectancy) == (None, None, None)
    assert (m.sortino, m.calmar) == (None, None)  # flat equity: no losing bar, no drawdown
    assert m.buy_and_hold == "0.01000000"

    _, pentads, record = run_session(loaded, ["buy 1 ACME\nadvance 2", "sell 1 ACME\nadvance"])
    m = compute_grade(loaded, record, pentads).metrics
    assert (m.trades, m.win_rate, m.profit_factor) == (1, "1.00000000", None)


def test_sortino_and_calmar_by_hand() -> None:
    loaded = daily(_bars("100", "100", "110", "99", "99"), cash="1000.00", bars_per_year=4)
    _, pentads, record = run_session(loaded, ["buy 10 ACME\nadvance 3", "sell 10 ACME\nadvance"])
    m = compute_grade(loaded, record, pentads).metrics
    # equity 1000, 1000, 1100, 990, 990: T = 4 returns 0, 0.1, -0.1, 0
    annual = (990 / 1000) ** (4 / 4) - 1
    downside = math.sqrt(0.01 / 4)
    assert m.sortino is not None
    assert m.calmar is not None
    assert abs(float(m.sortino) - annual / (downside * 2)) < 1e-8
    assert abs(float(m.calmar) - annual / 0.1) < 1e-8


def test_an_annualized_return_beyond_ten_to_the_hundred_is_null() -> None:
    sources = ["buy 10 ACME\nadvance 3", "sell 10 ACME\nadvance"]
    for bars_per_year, shown in ((252, True), (10_000_000, False)):
        # equity dips at bar 2 and gains 200 of 100000 over 4 bars
        loaded = daily(_bars("100", "100", "90", "120", "120"), bars_per_year=bars_per_year)
        _, pentads, record = run_session(loaded, sources)
        m = compute_grade(loaded, record, pentads).metrics
        assert m.return_ == "0.00200000"
        assert (m.sortino is not None, m.calmar is not None) == (shown, shown)
