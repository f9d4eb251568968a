"""Orders and fills as the engine tracks them (mutable, one object per order)."""

from __future__ import annotations

from typing import Final, final

from kestrel_protocol.objects.session import OrderStatus, OrderType, Side, Tif

from ..lang.syntax import Order
from .lots import quantity_units
from .scaled import Terms
from .trailing import Trail

__all__ = ["OPEN", "WORKING", "Fill", "LiveOrder", "order_links"]


WORKING: Final = frozenset({"new", "partially_filled"})
"""The statuses of an order matched at a bar (:attr:`LiveOrder.working`)."""
OPEN: Final = WORKING | {"held"}
"""The statuses of an order that may still fill (:attr:`LiveOrder.open`)."""


class LiveOrder:
    """One order over its life. Prices are P-unit integers (``limit_p``/``stop_p``).

    ``hit``/``scanned`` cache the trigger search: ``hit`` is the first bar at or after
    ``scanned + 1`` where the order can act (-1 when unknown), so a resting order costs
    nothing on the bars where it cannot fill.

    The links of docs/engine.md's order forms: ``parent`` (a bracket child's entry) and
    ``children`` (an entry's stop-loss and take-profit, ``held`` until its first fill,
    then active from bar ``active_from``); ``siblings`` (the members of its
    one-cancels-other group, itself included: a bracket's children, or the orders of
    ``oco NAME``, ``group``); ``trail`` (a trailing stop's ratchet); ``target`` (a
    target order's target as written).
    """

    __slots__ = (
        "active_from",
        "alias",
        "buy",
        "children",
        "closed_bar",
        "day_of",
        "expires",
        "filled",
        "group",
        "hit",
        "id",
        "limit",
        "limit_p",
        "line",
        "notional",
        "parent",
        "qty",
        "reason",
        "scanned",
        "seq",
        "siblings",
        "side",
        "status",
        "stop",
        "stop_p",
        "submitted_bar",
        "symbol",
        "target",
        "tif",
        "trail",
        "triggered",
        "type",
    )

    def __init__(
        self, id: str, statement: Order, terms: Terms, *, seq: int, bar: int, expires: int
    ) -> None:
        """The order ``statement`` places, as ``id``, by submission ``seq`` at ``bar``;
        its limit and stop in P units (and as price texts) by ``terms``; it expires after
        bar ``expires`` (:data:`.scaled.NEVER`: good till cancelled)."""
        self.id = id
        self.alias = statement.alias
        self.seq = seq
        self.line = statement.line
        self.side: Side = statement.side
        self.buy = statement.side == "buy"
        self.qty = quantity_units(statement.qty, terms.qty_scale)
        """In quantity units (see :mod:`.lots`)."""
        self.symbol = statement.symbol
        self.type: OrderType = statement.type
        limit = statement.limit
        stop = statement.stop
        self.limit_p = 0 if limit is None else terms.amount(limit)
        self.stop_p = 0 if stop is None else terms.amount(stop)
        self.limit = None if limit is None else terms.price(self.limit_p)
        self.stop = None if stop is None else terms.price(self.stop_p)
        self.tif: Tif = statement.tif
        self.submitted_bar = bar
        self.expires = expires
        self.day_of = -1
        """On a forward tape, a ``tif day`` order's eligible bar: it expires when a bar
        of a later day is processed (:mod:`.edge`); -1 otherwise."""
        self.status: OrderStatus = "new"
        self.filled = 0
        self.notional = 0
        self.closed_bar: int | None = None
        self.reason: str | None = None
        self.triggered = False
        self.hit = -1
        self.scanned = bar
        self.active_from = 0
        self.parent: LiveOrder | None = None
        self.children: tuple[LiveOrder, ...] = ()
        self.siblings: list[LiveOrder] | None = None
        self.group = statement.oco
        self.trail: Trail | None = None
        self.target = None if statement.target is None else statement.target.text

    @property
    def open(self) -> bool:
        """Whether the order may still fill: working, or a bracket child ``held``."""
        return self.status in OPEN

    @property
    def working(self) -> bool:
        """Whether the order is matched at a bar (open and not ``held``)."""
        return self.status in WORKING

    @property
    def remaining(self) -> int:
        return self.qty - self.filled


@final
class Fill:
    """One execution; ``price`` and ``fee`` in P units (a plain class: see
    :class:`.bus.Event`)."""

    __slots__ = ("bar", "fee", "id", "order", "price", "qty")

    def __init__(
        self, id: str, order: LiveOrder, *, bar: int, qty: int, price: int, fee: int
    ) -> None:
        self.id: Final = id
        self.order: Final = order
        self.bar: Final = bar
        self.qty: Final = qty
        self.price: Final = price
        self.fee: Final = fee


def order_links(order: LiveOrder) -> dict[str, str]:
    """The members a frame and the blotter show of an order's forms: ``parent``,
    ``group``, ``trail`` and ``target``, each only when the order has it (a plain order:
    none, so its objects and roots are as before)."""
    links: dict[str, str] = {}
    if order.parent is not None:
        links["parent"] = order.parent.id
    if order.group is not None:
        links["group"] = order.group
    if order.trail is not None:
        links["trail"] = order.trail.text
    if order.target is not None:
        links["target"] = order.target
    return links
