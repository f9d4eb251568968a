"""Placing orders (docs/spec.md §5, docs/engine.md "Order forms"): what an ``order``
statement puts on the book at the clock bar, its target, trail and bracket worked out.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from kestrel_protocol.objects.session import Side

from ..lang.syntax import Order
from .account import Account
from .brackets import Links, close_order
from .bus import Event
from .loop import BarLoop
from .orders import LiveOrder
from .scaled import NEVER, Terms
from .targets import target_position, target_quantity
from .trailing import Trail

if TYPE_CHECKING:
    from .loop import Columns

__all__ = ["Placer"]


class Placer:
    """Places one session's orders: ids in order (``o1``, ``o2``, ...), aliases, the
    expiry of each time in force, and the order forms. It shares the engine's lists."""

    def __init__(
        self,
        terms: Terms,
        cols: dict[str, Columns],
        days: Sequence[int],
        loop: BarLoop,
        links: Links,
        *,
        account: Account,
        orders: list[LiveOrder],
        open_orders: list[LiveOrder],
        aliases: dict[str, LiveOrder],
        forward: bool = False,
    ) -> None:
        self._terms = terms
        self._cols = cols
        self._days = days
        self._last = len(days) - 1
        self._loop = loop
        self._links = links
        self._account = account
        self._bus = links.bus
        self._orders = orders
        self._open = open_orders
        self._aliases = aliases
        self._forward = forward
        """A forward tape's: a day order's day end may not be published yet, so it is
        found bar by bar (``LiveOrder.day_of``) rather than fixed when placed."""
        self._clock = 0
        self._seq = 0
        self._day = -1
        self._day_end = -1
        """The last day a day order was placed for, and its last bar."""

    def retape(self, cols: dict[str, Columns], days: Sequence[int]) -> None:
        """Place on a forward tape with more bars published from now on."""
        self._cols = cols
        self._days = days
        self._last = len(days) - 1
        self._day = -1

    def place(self, st: Order, clock: int, seq: int) -> LiveOrder:
        """Place what ``st`` asks for at ``clock`` by submission ``seq``: its order (the
        entry), and a bracket's children after it; returns the entry."""
        self._clock = clock
        self._seq = seq
        if st.target is not None:
            st = self._targeted(st)
        order = self._new_order(st, self._expiry(st.tif))
        if self._forward and st.tif == "day":
            order.day_of = clock + 1
        if st.trail is not None:
            self._trail(order, st)
        if order.group is not None:
            self._links.join(order, order.group)
        self._bus.publish(Event("accepted", clock, order, order.qty))
        if st.placed > 1:
            self._bracket(order, st)
        if st.target is not None and not st.qty:
            close_order(order, self._open, self._bus, clock, "at-target")
        return order

    def _expiry(self, tif: str) -> int:
        """The last bar an order placed now with ``tif`` may act on."""
        eligible = self._clock + 1
        if tif == "gtc":
            return NEVER
        if tif == "ioc":
            return eligible
        if self._forward:  # its day's end may not be published: found bar by bar
            return NEVER
        days = self._days
        first = eligible if eligible < self._last else self._last
        day = days[first]
        if day != self._day:  # the day's last bar, found once per day traded (from its bar)
            self._day = day
            self._day_end = bisect_right(days, day, first) - 1
        return self._day_end

    def _new_order(self, st: Order, expires: int) -> LiveOrder:
        order = LiveOrder(
            f"o{len(self._orders) + 1}",
            st,
            self._terms,
            seq=self._seq,
            bar=self._clock,
            expires=expires,
        )
        self._orders.append(order)
        self._open.append(order)
        if st.alias is not None:
            self._aliases[st.alias] = order
        return order

    def _targeted(self, st: Order) -> Order:
        """A target order's statement with the quantity it trades now (docs/engine.md)."""
        assert st.target is not None
        clock = self._clock
        close = self._cols[st.symbol][3][clock]
        wanted = target_position(
            st.target,
            equity=self._loop.equity(clock),
            close=close,
            lot=self._terms.lots.get(st.symbol, 1),
            unit=10**self._terms.qty_scale,
        )
        position = self._account.position(st.symbol)
        qty = target_quantity(st.side == "buy", position=position, wanted=wanted)
        return replace(st, qty=self._terms.shares(qty))

    def _trail(self, order: LiveOrder, st: Order) -> None:
        assert st.trail is not None
        terms = self._terms
        trail = order.trail = Trail(
            st.trail,
            buy=order.buy,
            offset=0 if st.trail.percent else terms.amount(st.trail.value),
            tick=terms.ticks[st.symbol],
            close=self._cols[st.symbol][3][self._clock],
            bar=self._clock,
            price_text=terms.price,
        )
        order.stop_p = trail.stop()
        order.stop = terms.price(order.stop_p)

    def _bracket(self, entry: LiveOrder, st: Order) -> None:
        """Place ``entry``'s children, held: the stop-loss, then the take-profit."""
        side: Side = "sell" if st.side == "buy" else "buy"
        # each leg is the entry's statement with its own side, type and prices, gtc
        leg = replace(
            st, side=side, tif="gtc", alias=None, take=None, loss=None, loss_trail=None, oco=None
        )
        legs: list[Order] = []
        if st.loss_trail is not None:
            legs.append(
                replace(leg, type="trailing-stop", limit=None, stop=None, trail=st.loss_trail)
            )
        elif st.loss is not None:
            legs.append(replace(leg, type="stop", limit=None, stop=st.loss, trail=None))
        if st.take is not None:
            legs.append(replace(leg, type="limit", limit=st.take, stop=None, trail=None))
        children = []
        for one in legs:
            child = self._new_order(one, NEVER)
            if one.trail is not None:
                self._trail(child, one)
            children.append(child)
        self._links.bracket(entry, tuple(children))
        for child in children:
            self._bus.publish(Event("accepted", self._clock, child, child.qty, reason="bracket"))
