"""Annualized-return ratios of an equity series: Sortino and Calmar (backtesting.py's).

With e0…eT the equity series (T processed bars) and N the scenario's bars per year:

* annualized return ``A = (eT / e0) ** (N / T) − 1`` when every point is positive (the
  geometric mean of the per-bar growth, compounded over a year), else 0;
* ``sortino = A / (sqrt(Σ min(r, 0)² / T) × sqrt(N))`` over the per-bar simple returns r;
* ``calmar = A / maxDrawdown``.

A ratio is ``None`` when it is undefined (no processed bar, no losing bar, no
drawdown) or when ``A`` exceeds 10**100 (a few minute bars annualized over a year of
minutes), where it no longer means anything. Decimal at 50 significant digits:
``ln``, ``exp`` and ``sqrt`` are correctly rounded, so the figures are the same on every
machine.
"""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal, localcontext
from fractions import Fraction
from itertools import pairwise

from kestrel_protocol import DEFAULT_DECIMAL_CONTEXT, decimal_context, ratio

__all__ = ["bar_returns", "risk_metrics"]

_CONTEXT = decimal_context(50)
_LIMIT = DEFAULT_DECIMAL_CONTEXT.multiply(100, _CONTEXT.ln(10))
"""``ln(10**100)``: the largest annualized log-growth reported."""


def _ratio(value: Decimal) -> str:
    """A ratio of any magnitude to 8 places (the context grows to hold every digit)."""
    return ratio(value, decimal_context(max(50, value.adjusted() + 10)))


def _annualized(series: Sequence[int], bars_per_year: int) -> Decimal | None:
    bars = len(series) - 1
    if bars == 0 or any(e <= 0 for e in series):
        return Decimal(0)
    growth = (Decimal(series[-1]) / Decimal(series[0])).ln() * bars_per_year / bars
    if growth > _LIMIT:
        return None
    return growth.exp() - 1


def bar_returns(series: Sequence[int]) -> list[Decimal]:
    """The per-bar simple returns of ``series`` at 50 digits, 0 from an unchanged or a
    zero equity: made once for the Sharpe ratio and the downside deviation, which read
    the same quotients (a gym episode's 2,519 were made twice)."""
    zero = Decimal(0)
    with localcontext(_CONTEXT):
        # a quotient by the integer itself: converted exactly, as ``Decimal(previous)``
        return [
            zero if previous == equity or not previous else Decimal(equity - previous) / previous
            for previous, equity in pairwise(series)
        ]


def _downside(returns: Sequence[Decimal]) -> Decimal:
    """``sqrt(Σ min(r, 0)² / T)`` over the per-bar returns, the squares added in order
    from 0. A falling bar's return (``previous > 0`` and ``equity < previous``, or
    ``previous < 0`` and ``equity > previous``) is exactly a negative one: a rounded
    quotient of integers keeps its sign."""
    falls = [r * r for r in returns if r < 0]
    return (sum(falls, Decimal(0)) / len(returns)).sqrt()


def risk_metrics(
    series: Sequence[int],
    returns: Sequence[Decimal],
    bars_per_year: int,
    max_drawdown: Fraction,
) -> dict[str, str | None]:
    """``sortino`` and ``calmar`` of the equity series ``series`` (any unit), whose
    :func:`bar_returns` are ``returns``."""
    with localcontext(_CONTEXT):
        annual = _annualized(series, bars_per_year)
        sortino: str | None = None
        calmar: str | None = None
        if annual is not None and len(series) > 1:
            downside = _downside(returns)
            if downside:
                sortino = _ratio(annual / (downside * Decimal(bars_per_year).sqrt()))
            if max_drawdown:
                dd = Decimal(max_drawdown.numerator) / Decimal(max_drawdown.denominator)
                calmar = _ratio(annual / dd)
        return {"sortino": sortino, "calmar": calmar}
