"""The geometric mean of trade returns, ``exp(mean(ln(1 + r))) − 1`` (the grade's ``avgTrade``).

Its digits are defined by one computation, kept here as :func:`_by_sum`: in Decimal at 50
digits, each ``1 + r`` a quotient, its logarithm, their sum, over ``n``, ``exp``, ``− 1``,
then 8 places half-even. That is ``n`` fifty-digit logarithms (a gym episode's 1,135
trades: ≈ 17 ms). Since ``Σ ln x_i = ln Π x_i``, :func:`geometric_mean` takes ONE
logarithm, of the product of the ``x_i = (d_i + n_i) / d_i`` (each return ``n_i / d_i``),
and encloses both computations' values in an interval around its own; when that interval
rounds to one 8-place ratio, it is the one :func:`_by_sum` gives (rounding is monotonic),
else (a value within the interval's half-width of a rounding boundary, an exact tie
included) :func:`_by_sum` answers.

The enclosure. ``u_p = ½ · 10^(1−p)`` bounds the relative error of one correctly rounded
Decimal operation at ``p`` digits (quotient, product, ``ln``, ``exp``, difference). Let
``μ = (1/n) Σ ln x_i``, ``e = exp μ``, the true value ``V = e − 1``, and ``Λ ≥ Σ |ln x_i|``.

* :func:`_by_sum` (``u = u_50``, and ``n·u ≤ 10^-40``): a quotient ``x̃_i = x_i(1 + δ)``
  moves ``ln x_i`` by at most ``2u``; its logarithm rounded adds ``u |ln x̃_i|``; the
  sum's ``n − 1`` roundings add ``γ_n Σ |ℓ_i| ≈ n·u·Λ`` (``γ_n = nu/(1 − nu)``), the mean's
  one ``u |S| / n``. So its mean ``m`` has ``|m − μ| ≤ ε_sum ≤ 3u + 3.1·u·Λ ≤ 4u(Λ + 1)``.
* :func:`_enclosed` (``w = u_60``): ``Π (d_i + n_i)`` and ``Π d_i`` each with at most ``n``
  rounded products, their quotient one more: ``ln`` of it is ``Σ ln x_i`` within ``4nw``;
  its logarithm rounded adds ``w (Λ + 4nw)``, the mean ``w |L| / n``: ``|m̂ − μ| ≤ ε_new
  ≤ 4w + 2.01·w(Λ + 1) ≤ 7w(Λ + 1)``.
* Either mean to the value, at unit ``v``: ``|exp(m) − e| ≤ e(e^ε − 1) ≤ 2eε`` (``ε ≤ ½``),
  ``exp`` rounded adds ``v·e(1 + 2ε) ≤ 2ve``, ``− 1`` rounded adds ``v |ẽ − 1| ≤ v(2e + 1)``:
  ``|V' − V| ≤ (e + 1)(2ε + 4v)``. So ``|V_sum − V| ≤ 12u(e + 1)(Λ + 1)`` and
  ``|V̂ − V| ≤ 18w(e + 1)(Λ + 1)``, together below ``10^-48 (e + 1)(Λ + 1)``, and
  ``e + 1 = V + 2 ≤ |V̂| + 3``.
* ``Λ``: every ``d_i`` and ``d_i + n_i`` is a positive integer, so ``|ln x_i| ≤ ln(d_i +
  n_i) + ln d_i`` and ``Σ |ln x_i| ≤ ln Π (d_i + n_i) + ln Π d_i``, each ``ln P ≤
  (adjusted(P̂) + 1) · ln 10`` for the rounded product ``P̂``: ``Λ̄ = 3 (adjusted(Â) +
  adjusted(B̂) + 2)``.

The half-width used is ``10^-45 (|V̂| + 3)(Λ̄ + 1)``, a thousand times the bound (room for
a function one ulp off rather than half), made with upward rounding, and the ends of the
interval with outward rounding. The bounds assume no overflow or underflow in
:func:`_by_sum`: so :func:`_enclosed` declines when a product exceeds ``10^990000``
(then some ``x_i`` could leave Decimal's default exponent range), when ``n ≥ 10^9``, or when
``|V̂| ≥ 10^30`` (today's quantize at 50 digits raises from ``10^42``; :func:`_by_sum`
keeps doing so). A gym episode: ≈ 17 ms → ≈ 0.4 ms.
"""

from __future__ import annotations

from collections.abc import Sequence
from decimal import (
    ROUND_CEILING,
    ROUND_FLOOR,
    Decimal,
    localcontext,
)

from kestrel_protocol import decimal_context, ratio

__all__ = ["geometric_mean"]

_CONTEXT = decimal_context(50)
"""Where :func:`_by_sum` computes, and every 8-place ratio is quantized (as today)."""

_PRODUCT = decimal_context(60, wide=True)
"""Where :func:`_enclosed` computes: 60 digits, exponents as wide as Decimal allows."""

_ONE = Decimal(1)
_SLACK = Decimal("1E-45")
_LARGEST = 990_000
"""The largest ``adjusted()`` of a product :func:`_enclosed` accepts."""
_HUGE = Decimal("1E30")
_MOST = 10**9
"""Returns :func:`_enclosed` accepts at most (less one)."""


def geometric_mean(returns: Sequence[tuple[int, int]]) -> str:
    """``exp(mean(ln(1 + r))) − 1`` of ``returns`` (each ``(numerator, denominator)`` in
    lowest terms, the denominator positive, at least one) as an 8-place ratio; 0 when
    some ``1 + r`` is not positive (backtesting.py's ``geometric_mean``). The digits of
    :func:`_by_sum`, computed with one logarithm unless the value is within the bounds of
    a rounding boundary (module docstring)."""
    if any(n <= -d for n, d in returns):
        return ratio(Decimal(0), _CONTEXT)
    enclosed = _enclosed(returns)
    return _by_sum(returns) if enclosed is None else enclosed


def _enclosed(returns: Sequence[tuple[int, int]]) -> str | None:
    """The 8-place ratio both this product's value and :func:`_by_sum`'s lie within the
    module docstring's bounds of, or ``None`` when those bounds reach across a rounding
    boundary (or the inputs leave the range the bounds hold in)."""
    count = len(returns)
    if count >= _MOST:
        return None
    with localcontext(_PRODUCT) as ctx:
        grown = base = _ONE
        for n, d in returns:
            grown *= d + n
            base *= d
        if grown.adjusted() > _LARGEST or base.adjusted() > _LARGEST:
            return None
        value = ((grown / base).ln() / count).exp() - _ONE
        size = value.copy_abs()
        if size >= _HUGE:
            return None
        ctx.rounding = ROUND_CEILING
        spread = _SLACK * (size + 3) * (3 * (grown.adjusted() + base.adjusted() + 2) + 1)
        high = value + spread
        ctx.rounding = ROUND_FLOOR
        low = value - spread
    with localcontext(_CONTEXT):
        rounded = ratio(low, _CONTEXT)
        return rounded if rounded == ratio(high, _CONTEXT) else None


def _by_sum(returns: Sequence[tuple[int, int]]) -> str:
    """The defining computation (each ``1 + r > 0``): the sum of the ``n`` logarithms at
    50 digits. ``1 + n/d`` is ``(d + n)/d`` in lowest terms already, so each logarithm's
    argument is that quotient, without a fraction's sum."""
    with localcontext(_CONTEXT):
        total = sum(((Decimal(d + n) / Decimal(d)).ln() for n, d in returns), Decimal(0))
        return ratio((total / len(returns)).exp() - 1, _CONTEXT)
