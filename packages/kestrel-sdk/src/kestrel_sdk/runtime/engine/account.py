"""Cash, positions and P&L of one session (average-cost accounting).

A position keeps its signed share count and its signed cost basis (``avg × qty``) exactly:
a plain int while it is whole (fills are whole P units; only a partial close at a
fractional average leaves a fraction), a ``Fraction`` otherwise; the realized P&L
likewise. A fill that grows a position adds to the basis; one that shrinks it realizes
``(price − avg) × closed shares`` (mirrored for shorts) and keeps the average; one that
crosses zero closes the old side in full and opens the rest at the fill price, so the
new side's average is that price. Fees are never folded into the average: they
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


def _exact(value: Fraction | int) -> Fraction | int:
    """Whole values stay plain ints so the per-bar arithmetic stays integer."""
    return value.numerator if value.denominator == 1 else value


def _quotient(num: Fraction | int, den: int) -> Fraction | int:
    """``num / den`` exactly (``den`` ≠ 0): a plain int when whole, as :func:`_exact`.

    The basis and the realized P&L are whole in P units unless a partial close leaves a
    fraction of a unit behind, so the integer quotient is tried first and a
    :class:`~fractions.Fraction` is made only for a remainder.
    """
    if isinstance(num, int):
        whole, rest = divmod(num, den)
        return whole if not rest else Fraction(num, den)
    return _exact(num / den)


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
        basis = held.basis
        after = qty + delta
        if (qty > 0) == (delta > 0):
            held.qty = after
            held.basis = basis + delta * price  # a fraction plus an integer is never whole
            return
        # closing shares at ``price`` realizes (price − avg) × closed × sign(qty), with
        # avg = basis / qty: that is (price × qty − basis) × closed / |qty|
        size = qty if qty > 0 else -qty  # (|qty| and the shares closed without calls)
        traded = delta if delta > 0 else -delta
        closed = traded if traded < size else size
        realized = self.realized + _quotient((price * qty - basis) * closed, size)
        # (only a fraction may be whole: an int plus an int is one already)
        self.realized = realized if isinstance(realized, int) else _exact(realized)
        if after == 0:
            del self.holdings[symbol]
        elif (after > 0) == (qty > 0):
            held.qty = after
            held.basis = _quotient(basis * after, qty)
        else:
            held.qty = after
            held.basis = after * price
