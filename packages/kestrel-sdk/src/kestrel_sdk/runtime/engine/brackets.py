"""Brackets and one-cancels-other groups (docs/engine.md): the links between orders,
kept from the session's bus.

* A bracket's children (``take PRICE``: a limit, ``loss PRICE``: a stop, on the other
  side, ``gtc``) are placed ``held`` with their entry, the stop-loss first. The entry's
  first fill activates them (event ``activated``) for the quantity filled so far, and
  each later fill of the entry grows them to it. They are matched from the entry's fill
  bar when the entry is a market order (the rest of that bar follows its open), else
  from the next bar: backtesting.py's rule for its SL/TP orders. A trailing stop-loss
  (``loss trail 2.50``) starts from the entry's first fill price on its fill bar, then
  ratchets on the closes from that bar on. An entry closed
  without any fill (cancelled, expired, rejected) cancels its held children
  (reason ``parent``).
* The members of a group (a bracket's two children; the orders of ``oco NAME``) are
  siblings: the first fill of one cancels every other open member (reason ``oco``).
"""

from __future__ import annotations

from .bus import Event, EventBus
from .orders import LiveOrder
from .trailing import restart

__all__ = ["Links", "close_order"]


def close_order(
    order: LiveOrder, open_orders: list[LiveOrder], bus: EventBus, bar: int, reason: str
) -> None:
    """Cancel ``order`` at ``bar`` for ``reason`` (event ``cancelled``); nothing when it is
    no longer open (a group's or a bracket's cancel may have closed it already)."""
    if not order.open:
        return
    order.status = "cancelled"
    order.closed_bar = bar
    order.reason = reason
    open_orders.remove(order)
    bus.publish(Event("cancelled", bar, order, order.remaining, reason=reason))


class Links:
    """Bus subscriber acting on fills and closings of linked orders. It subscribes when
    the session's first linked order is placed: no event before concerns it, and the
    frame and the blotter, subscribed when the engine was made, still see each event
    before what it causes."""

    __slots__ = ("_bus", "_groups", "_open", "_subscribed")

    def __init__(self, open_orders: list[LiveOrder], bus: EventBus) -> None:
        self._open = open_orders
        self._bus = bus
        self._groups: dict[str, list[LiveOrder]] = {}
        self._subscribed = False

    def _linking(self) -> None:
        """An order is being linked: from now on events may concern the links."""
        if not self._subscribed:
            self._subscribed = True
            self._bus.subscribe(self.on_event)

    @property
    def bus(self) -> EventBus:
        """The session's bus (the links publish on it)."""
        return self._bus

    def join(self, order: LiveOrder, group: str) -> None:
        """Put ``order`` in its ``oco`` group ``group``."""
        self._linking()
        members = self._groups.setdefault(group, [])
        members.append(order)
        order.siblings = members

    def bracket(self, entry: LiveOrder, children: tuple[LiveOrder, ...]) -> None:
        """Hold ``children`` (stop-loss first, then take-profit) on ``entry``."""
        self._linking()
        siblings = list(children)
        for child in children:
            child.status = "held"
            child.parent = entry
            child.siblings = siblings if len(siblings) > 1 else None
        entry.children = children

    def on_event(self, event: Event) -> None:
        order = event.order
        if order is None or (not order.children and order.siblings is None):
            return  # no order, or one without links: nothing follows from it here
        kind = event.type
        if kind == "fill" and event.fill is not None:
            self._filled(order, event.bar, event.fill.price)
        elif kind in {"cancelled", "expired", "rejected"} and not order.filled:
            for child in order.children:
                close_order(child, self._open, self._bus, event.bar, "parent")

    def _filled(self, order: LiveOrder, bar: int, price: int) -> None:
        for child in order.children:
            if child.status == "held":
                child.status = "new"
                child.qty = order.filled
                child.active_from = bar if order.type == "market" else bar + 1
                child.scanned = child.active_from - 1
                child.hit = -1
                restart(child, price, bar)
                self._bus.publish(Event("activated", bar, child, child.qty))
            elif child.open:
                child.qty = max(order.filled, child.filled)
        siblings = order.siblings
        if siblings is not None:
            for other in siblings:
                if other is not order:
                    close_order(other, self._open, self._bus, bar, "oco")
