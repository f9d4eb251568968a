"""Target orders (docs/engine.md): ``buy ACME to 50`` trades to a position,
``buy ACME to 10%`` to a weight of equity, in one statement.

The quantity is fixed when the statement is applied, from the clock bar: the target
position is the number written, or ``weight × equity ÷ close`` (equity and close at the
clock bar's close) rounded toward zero to the lot. The order then trades the difference
from the position held at that moment, on its own side only: a ``buy ... to`` never
sells and a ``sell ... to`` never buys. A target already reached (or on the other side)
places an order of quantity 0, cancelled at once (reason ``at-target``), so order ids
stay one per statement.
"""

from __future__ import annotations

from fractions import Fraction

from kestrel_protocol import DEFAULT_DECIMAL_CONTEXT

from ..lang.syntax import Amount

__all__ = ["target_position", "target_quantity"]


def target_position(target: Amount, *, equity: int, close: int, lot: int, unit: int = 1) -> int:
    """The position ``target`` asks for, in quantity units (``unit`` of them a share:
    see :mod:`.lots`): the number written, or the weight of ``equity`` (money units) at
    ``close`` (P units) in whole lots (``lot`` in quantity units), rounded toward zero."""
    if not target.percent:
        return int(DEFAULT_DECIMAL_CONTEXT.multiply(target.value, unit))
    if close <= 0:
        return 0
    wanted = Fraction(target.value) / 100 * equity / close
    lots = abs(wanted) // lot * lot  # whole lots, toward zero
    return lots if wanted >= 0 else -lots


def target_quantity(buy: bool, *, position: int, wanted: int) -> int:
    """What an order on its side trades to take ``position`` to ``wanted`` (0: nothing)."""
    delta = wanted - position
    if buy:
        return max(delta, 0)
    return max(-delta, 0)
