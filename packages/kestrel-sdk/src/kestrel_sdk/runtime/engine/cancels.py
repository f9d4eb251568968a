"""Cancelling orders: a ``cancel`` statement's (one order by id or alias, a symbol's open
orders, or every open order) and the engine's own (a close, a stand-down, a margin
call), each with its event (docs/spec.md §5)."""

from __future__ import annotations

from ..lang.syntax import Cancel
from .brackets import close_order
from .bus import Event, EventBus
from .orders import LiveOrder

__all__ = ["Cancels"]


class Cancels:
    """Cancels the orders of one session (the engine's lists, shared, not copied)."""

    def __init__(
        self,
        orders: list[LiveOrder],
        open_orders: list[LiveOrder],
        aliases: dict[str, LiveOrder],
        bus: EventBus,
    ) -> None:
        self._orders = orders
        self._open = open_orders
        self._aliases = aliases
        self._bus = bus

    def resolve(self, ref: str) -> LiveOrder | None:
        """The order an alias or an id (``o3``) names, if any."""
        order = self._aliases.get(ref)
        if order is None and ref[:1] == "o" and ref[1:].isdigit():
            index = int(ref[1:])
            if 1 <= index <= len(self._orders):
                order = self._orders[index - 1]
        return order

    def statement(self, st: Cancel, bar: int) -> None:
        """Apply a ``cancel`` statement at ``bar``."""
        if st.ref is not None:
            order = self.resolve(st.ref)
            if order is None:  # K204 refuses the source before it is applied
                return
            if order.open:
                self.cancel(order, bar, "statement")
            else:  # too late: say so in the frame rather than nothing at all
                self._bus.publish(Event("cancel-rejected", bar, order, reason=order.status))
            return
        for order in list(self._open):
            if st.symbol is None or order.symbol == st.symbol:
                self.cancel(order, bar, "statement")

    def cancel(self, order: LiveOrder, bar: int, reason: str) -> None:
        close_order(order, self._open, self._bus, bar, reason)

    def cancel_open(self, bar: int, reason: str) -> None:
        """Cancel every open order at ``bar`` for ``reason``, in id order."""
        for order in list(self._open):
            self.cancel(order, bar, reason)
