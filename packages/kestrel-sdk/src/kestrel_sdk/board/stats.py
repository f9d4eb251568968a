"""The figures of one cell of the board: N runs, their mean and a 95 % interval.

The interval is Student's t-interval of the mean: ``mean ± t(0.975, N-1) · s / √N``,
``s`` the sample standard deviation (divisor N-1). ``t`` is read from a fixed table
(two-sided 95 %; between tabulated degrees of freedom the smaller one's, which is the
wider interval; 1.960 beyond 120). Everything is computed in :class:`decimal.Decimal`
at 28 digits from the grades' own decimal strings, so that a board is the same bytes on
every machine. A cell of one run has no interval: its bounds are its value, and the
page says N = 1.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal, localcontext

from kestrel_protocol import DEFAULT_DECIMAL_CONTEXT

__all__ = ["Interval", "eight_places", "interval", "t_quantile"]

_T_975: dict[int, str] = {
    1: "12.706", 2: "4.303", 3: "3.182", 4: "2.776", 5: "2.571", 6: "2.447", 7: "2.365",
    8: "2.306", 9: "2.262", 10: "2.228", 11: "2.201", 12: "2.179", 13: "2.160", 14: "2.145",
    15: "2.131", 16: "2.120", 17: "2.110", 18: "2.101", 19: "2.093", 20: "2.086",
    21: "2.080", 22: "2.074", 23: "2.069", 24: "2.064", 25: "2.060", 26: "2.056",
    27: "2.052", 28: "2.048", 29: "2.045", 30: "2.042", 40: "2.021", 60: "2.000",
    120: "1.980",
}  # fmt: skip
_NORMAL = Decimal("1.960")


def t_quantile(df: int) -> Decimal:
    """Student's t at 0.975 for ``df`` degrees of freedom (the next tabulated df below)."""
    if df < 1:
        raise ValueError(f"a t-interval needs at least one degree of freedom, got {df}")
    if df > max(_T_975):
        return _NORMAL
    return Decimal(_T_975[max(k for k in _T_975 if k <= df)])


@dataclass(frozen=True, slots=True)
class Interval:
    """N values' mean and 95 % t-interval (``half``: its half-width, None for N = 1)."""

    n: int
    mean: Decimal
    low: Decimal
    high: Decimal
    half: Decimal | None

    def overlaps(self, other: Interval) -> bool:
        return self.low <= other.high and other.low <= self.high


def interval(values: list[Decimal]) -> Interval:
    """The mean of ``values`` (at least one) and its 95 % t-interval."""
    if not values:
        raise ValueError("an interval needs at least one value")
    with localcontext(DEFAULT_DECIMAL_CONTEXT):
        n = len(values)
        mean = sum(values, Decimal(0)) / n
        if n == 1:
            return Interval(1, mean, mean, mean, None)
        variance = sum(((v - mean) ** 2 for v in values), Decimal(0)) / (n - 1)
        half = t_quantile(n - 1) * variance.sqrt() / Decimal(n).sqrt()
        return Interval(n, mean, mean - half, mean + half, half)


def eight_places(value: Decimal) -> str:
    """``value`` to 8 decimal places, half-even, as the board shows every figure (whatever
    the caller's decimal context)."""
    with localcontext(DEFAULT_DECIMAL_CONTEXT):
        return f"{value:.8f}"
