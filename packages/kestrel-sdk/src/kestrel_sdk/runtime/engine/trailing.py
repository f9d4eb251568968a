"""Trailing stops (docs/engine.md): a stop that follows the market by a price offset or a
percent, ratcheting on each bar's close.

A trailing sell's stop is ``extreme − offset`` (or ``extreme × (1 − percent)``, rounded
down to the tick), where ``extreme`` is the highest close from the bar it was placed on
through the bar before the one being matched; it only ever rises. A trailing buy mirrors
it (the lowest close, ``+ offset`` or ``× (1 + percent)`` rounded up to the tick). This is
backtesting.py's ``TrailingStrategy`` rule (``sl = max(sl, Close[-1] − offset)`` after
each bar, in force from the next): the stop a bar is matched against is known before the
bar opens, so a fill never depends on the order of prices inside a bar. At a bar the
order is matched as a stop at that stop (gap through it: fills at the open).
"""

from __future__ import annotations

from array import array
from collections.abc import Callable
from fractions import Fraction
from typing import Protocol

from ..lang.syntax import Amount
from .scaled import div_ceil

__all__ = ["Trail", "Trailed", "follow", "restart", "trail_search"]


class Trail:
    """A trailing stop's ratchet: its offset, the extreme close so far and the last bar
    whose close it has seen (``seen``)."""

    __slots__ = ("buy", "extreme", "offset", "percent", "price_text", "seen", "text", "tick")

    def __init__(
        self,
        amount: Amount,
        *,
        buy: bool,
        offset: int,
        tick: int,
        close: int,
        bar: int,
        price_text: Callable[[int], str],
    ) -> None:
        """``amount`` as written (``offset``: a price offset in P units, 0 for a percent),
        anchored at ``close``, the close of ``bar`` (the bar it is placed on)."""
        self.text = amount.text
        """The offset as written (``"2.50"``, ``"5%"``)."""
        self.buy = buy
        self.offset = offset
        self.percent = Fraction(amount.value) / 100 if amount.percent else None
        self.tick = tick if tick > 0 else 1
        self.extreme = close
        self.seen = bar
        self.price_text = price_text

    def stop(self, extreme: int | None = None) -> int:
        """The stop in P units for ``extreme`` (default: the extreme so far)."""
        extreme = self.extreme if extreme is None else extreme
        percent = self.percent
        tick = self.tick
        if percent is None:
            return extreme + self.offset if self.buy else extreme - self.offset
        if self.buy:
            above = extreme * (1 + percent)
            return div_ceil(above.numerator, above.denominator * tick) * tick
        below = extreme * (1 - percent)
        return below.numerator // (below.denominator * tick) * tick


class Trailed(Protocol):
    """What the functions below read and move of an order with a trail (an
    :class:`.orders.LiveOrder`, which holds its :class:`Trail`)."""

    @property
    def trail(self) -> Trail | None: ...

    @property
    def buy(self) -> bool: ...

    stop_p: int
    stop: str | None


def follow(order: Trailed, close: array[int], bar: int) -> None:
    """Ratchet ``order``'s trail over the closes up to bar ``bar − 1`` (its stop for bar
    ``bar``); its ``stop_p`` and ``stop`` follow."""
    trail = order.trail
    if trail is None or trail.seen >= bar - 1:
        return
    part = close[trail.seen + 1 : bar]
    trail.seen = bar - 1
    extreme = min(part) if trail.buy else max(part)
    if (extreme < trail.extreme) if trail.buy else (extreme > trail.extreme):
        trail.extreme = extreme
        order.stop_p = trail.stop()
        order.stop = trail.price_text(order.stop_p)


def restart(order: Trailed, price: int, bar: int) -> None:
    """Start ``order``'s trail (a bracket's trailing stop-loss, if it is one) from its
    entry's fill ``price`` at ``bar``: the stop for that bar is ``price`` less the offset,
    and the closes from that bar on ratchet it."""
    trail = order.trail
    if trail is None:
        return
    trail.extreme = price
    trail.seen = bar - 1
    order.stop_p = trail.stop()
    order.stop = trail.price_text(order.stop_p)


def trail_search(
    order: Trailed, cols: tuple[array[int], array[int], array[int]], start: int, end: int
) -> int:
    """The first bar in ``start..end`` where ``order``'s trailing stop is reached, else -1;
    ``cols``: the symbol's high, low and close.

    The search leaves the ratchet where it is: the bar loop may match the order at an
    earlier bar (when another order acts there), and it must be matched at that bar's
    stop, so only :func:`follow` moves the ratchet, bar by bar, as bars are processed."""
    trail = order.trail
    assert trail is not None
    buy = order.buy
    high, low, close = cols
    extreme = trail.extreme
    if trail.seen + 1 < start:  # the closes before the first bar searched
        part = close[trail.seen + 1 : start]
        seen = min(part) if buy else max(part)
        if seen < extreme if buy else seen > extreme:
            extreme = seen
    stop = trail.stop(extreme)
    for bar in range(start, end + 1):
        if high[bar] >= stop if buy else low[bar] <= stop:
            return bar
        price = close[bar]
        if price < extreme if buy else price > extreme:
            extreme = price
            stop = trail.stop(extreme)
    return -1
