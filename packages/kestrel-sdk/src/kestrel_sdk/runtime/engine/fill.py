"""Fill prices (docs/spec.md §5 matching) and the cheap search for the next bar an order can act.

All prices are P-unit integers. Buy rules are written out; sells mirror them.
"""

from __future__ import annotations

import weakref
from array import array
from fractions import Fraction
from typing import Final

from .orders import LiveOrder
from .scaled import div_ceil

__all__ = ["first_ge", "first_le", "match_price", "slipped", "trigger_search"]

_BLOCK = 256
"""Bars per block: a column's blocks have their lowest and highest value remembered."""

Bounds = list["int | None"]

_BOUNDS: Final[dict[int, tuple[weakref.ref[array[int]], Bounds, Bounds]]] = {}
"""Per tape column (by ``id``, while it lives): each block's minimum and maximum, found
the first time a search crosses the block whole. A tape's columns never change once
loaded, and every session on the tape shares them, so a block is screened once."""


def _bounds(col: array[int]) -> tuple[Bounds, Bounds]:
    """The column's block minima and maxima (``None``: not found yet)."""
    key = id(col)
    found = _BOUNDS.get(key)
    if found is not None and found[0]() is col:
        return found[1], found[2]
    blocks = -(-len(col) // _BLOCK)
    mins: Bounds = [None] * blocks
    maxs: Bounds = [None] * blocks
    _BOUNDS[key] = (weakref.ref(col, lambda _: _BOUNDS.pop(key, None)), mins, maxs)
    return mins, maxs


def first_le(col: array[int], x: int, start: int, end: int) -> int:
    """The first index in ``start..end`` (inclusive) with ``col[i] <= x``, else -1.

    Whole blocks are screened by their remembered minimum, so a resting order far from
    the market costs one comparison per 256 bars once the column's blocks are known
    """
    return _first(col, x, start, end, below=True)


def first_ge(col: array[int], x: int, start: int, end: int) -> int:
    """The first index in ``start..end`` (inclusive) with ``col[i] >= x``, else -1."""
    return _first(col, x, start, end, below=False)


def _first(col: array[int], x: int, start: int, end: int, below: bool) -> int:
    """:func:`first_le` (``below``) or :func:`first_ge` in Python: block by block, each
    screened by its minimum (maximum), remembered for a whole block, found in place for
    the part of one the range cuts."""
    stop = end + 1
    bounds: Bounds | None = None
    i = start
    while i < stop:
        block = i // _BLOCK
        j = min(stop, (block + 1) * _BLOCK)
        if j - i < _BLOCK:
            bound = _bound(col[i:j], below)
        else:
            if bounds is None:
                bounds = _bounds(col)[0 if below else 1]
            found = bounds[block]
            bound = bounds[block] = _bound(col[i:j], below) if found is None else found
        if bound <= x if below else bound >= x:
            for k in range(i, j):
                if col[k] <= x if below else col[k] >= x:
                    return k
        i = j
    return -1


def _bound(part: array[int], below: bool) -> int:
    return min(part) if below else max(part)


def trigger_search(
    order: LiveOrder, high: array[int], low: array[int], start: int, end: int
) -> int:
    """The first bar in ``start..end`` where ``order`` may fill (or trigger), else -1.

    A market order acts at once. A limit can act only when the bar trades through it
    (a gap through it shows in the same column: Low ≤ O for a buy); a stop or an
    untriggered stop-limit only when the bar reaches its stop.
    """
    if start > end:
        return -1
    kind = order.type
    if kind == "market":
        return start
    if kind == "limit" or (kind == "stop-limit" and order.triggered):
        if order.buy:
            return first_le(low, order.limit_p, start, end)
        return first_ge(high, order.limit_p, start, end)
    if order.buy:
        return first_ge(high, order.stop_p, start, end)
    return first_le(low, order.stop_p, start, end)


def _limit(buy: bool, limit: int, o: int, h: int, lo: int) -> int | None:
    if buy:
        if o <= limit:
            return o
        return limit if lo <= limit else None
    if o >= limit:
        return o
    return limit if h >= limit else None


def slipped(buy: bool, price: int, h: int, lo: int, *, slippage: Fraction | None, tick: int) -> int:
    """``price`` moved ``slippage`` against the order, rounded to the tick against the
    order, and capped at the bar's High (buy) or Low (sell); ``None``: no slippage."""
    if not slippage:
        return price
    num, den = slippage.numerator, slippage.denominator
    tick = tick if tick > 0 else 1
    if buy:
        moved = div_ceil(price * (den + num), den * tick) * tick
        return min(moved, h)
    moved = (price * (den - num)) // (den * tick) * tick
    return max(moved, lo)


def match_price(
    order: LiveOrder, o: int, h: int, lo: int, *, slippage: Fraction | None, tick: int
) -> int | None:
    """The price ``order`` fills at on a bar with open/high/low ``o``/``h``/``lo``, or
    ``None``. A stop-limit's trigger is remembered on the order (``triggered``)."""
    buy = order.buy
    kind = order.type
    if kind == "market":
        return slipped(buy, o, h, lo, slippage=slippage, tick=tick)
    if kind == "limit":
        return _limit(buy, order.limit_p, o, h, lo)
    stop = order.stop_p
    if kind in {"stop", "trailing-stop"}:  # a trailing stop's stop_p is the bar's stop
        if buy:
            price = o if o >= stop else stop if h >= stop else None
        else:
            price = o if o <= stop else stop if lo <= stop else None
        return None if price is None else slipped(buy, price, h, lo, slippage=slippage, tick=tick)
    # stop-limit
    limit = order.limit_p
    if order.triggered:
        return _limit(buy, limit, o, h, lo)
    gap = o >= stop if buy else o <= stop
    if gap:
        order.triggered = True
        return _limit(buy, limit, o, h, lo)
    inside = h >= stop if buy else lo <= stop
    if not inside:
        return None
    order.triggered = True
    reachable = limit >= stop if buy else limit <= stop
    return stop if reachable else None
