"""Cash, positions and P&L of one session (average-cost accounting).

A position keeps its signed share count and its signed cost basis (``avg × qty``) as an
exact fraction. A fill that grows a position adds to the basis; one that shrinks it
realizes ``(price − avg) × closed shares`` (mirrored for shorts) and keeps the average;
one that crosses zero closes the old side in full and opens the rest at the fill price,
so the new side's average is that price. Fees are never folded into the average: they
are their own total, so ``equity = starting cash + realized + unrealized − fees``.
"""

from __future__ import annotations

from fractions import Fraction

__all__ = ["Account", "Holding"]


class Holding:
    """A non-flat position: signed ``qty`` and signed ``basis`` (P units × shares)."""

    __slots__ = ("basis", "qty")

    def __init__(self, qty: int, basis: Fraction | int) -> None:
        self.qty = qty
        self.basis = basis

    @property
    def avg(self) -> Fraction:
        return Fraction(self.basis) / self.qty


def _exact(value: Fraction) -> Fraction | int:
    """Whole values stay plain ints so the per-bar arithmetic stays integer."""
    return value.numerator if value.denominator == 1 else value


class Account:
    """Money state in P units; ``holdings`` only lists symbols with a position."""

    __slots__ = ("cash", "fees", "holdings", "realized")

    def __init__(self, cash: int) -> None:
        self.cash = cash
        self.fees = 0
        self.realized: Fraction | int = 0
        self.holdings: dict[str, Holding] = {}

    def position(self, symbol: str) -> int:
        held = self.holdings.get(symbol)
        return 0 if held is None else held.qty

    def apply_fill(self, symbol: str, delta: int, price: int, fee: int) -> None:
        """Book a fill of ``delta`` shares (negative = sell) at ``price`` with ``fee``."""
        self.cash -= delta * price + fee
        self.fees += fee
        held = self.holdings.get(symbol)
        if held is None:
            self.holdings[symbol] = Holding(delta, delta * price)
            return
        qty = held.qty
        after = qty + delta
        if (qty > 0) == (delta > 0):
            held.qty = after
            held.basis = _exact(Fraction(held.basis) + delta * price)
            return
        avg = held.avg
        closed = min(abs(delta), abs(qty))
        sign = 1 if qty > 0 else -1
        self.realized = _exact(self.realized + (price - avg) * closed * sign)
        if after == 0:
            del self.holdings[symbol]
        elif (after > 0) == (qty > 0):
            held.qty = after
            held.basis = _exact(avg * after)
        else:
            held.qty = after
            held.basis = after * price
