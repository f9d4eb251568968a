"""Orders and fills as the engine tracks them (mutable, one object per order)."""

from __future__ import annotations

from typing import Final, final

from kestrel_protocol.objects.session import OrderStatus, OrderType, Side, Tif

from ..lang.syntax import Order
from .scaled import Terms

__all__ = ["Fill", "LiveOrder"]


class LiveOrder:
    """One order over its life. Prices are P-unit integers (``limit_p``/``stop_p``).

    ``hit``/``scanned`` cache the trigger search: ``hit`` is the first bar at or after
    ``scanned + 1`` where the order can act (-1 when unknown), so a resting order costs
    nothing on the bars where it cannot fill.
    """

    __slots__ = (
        "alias",
        "buy",
        "closed_bar",
        "expires",
        "filled",
        "hit",
        "id",
        "limit",
        "limit_p",
        "line",
        "notional",
        "qty",
        "reason",
        "scanned",
        "seq",
        "side",
        "status",
        "stop",
        "stop_p",
        "submitted_bar",
        "symbol",
        "tif",
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
        self.qty = terms.units(statement.qty)
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
        self.status: OrderStatus = "new"
        self.filled = 0
        self.notional = 0
        self.closed_bar: int | None = None
        self.reason: str | None = None
        self.triggered = False
        self.hit = -1
        self.scanned = bar

    @property
    def open(self) -> bool:
        return self.status in {"new", "partially_filled"}

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
