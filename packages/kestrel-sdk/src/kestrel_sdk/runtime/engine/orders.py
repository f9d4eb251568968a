"""Orders and fills as the engine tracks them (mutable, one object per order)."""

from __future__ import annotations

from typing import Final, final

from kestrel_protocol.objects.session import OrderStatus, OrderType, Side, Tif

from .scaled import NEVER

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
        self,
        *,
        id: str,
        alias: str | None,
        seq: int,
        line: int,
        side: Side,
        qty: int,
        symbol: str,
        type: OrderType,
        limit: str | None,
        stop: str | None,
        limit_p: int,
        stop_p: int,
        tif: Tif,
        submitted_bar: int,
        expires: int = NEVER,
        reason: str | None = None,
    ) -> None:
        self.id = id
        self.alias = alias
        self.seq = seq
        self.line = line
        self.side = side
        self.buy = side == "buy"
        self.qty = qty
        self.symbol = symbol
        self.type = type
        self.limit = limit
        self.stop = stop
        self.limit_p = limit_p
        self.stop_p = stop_p
        self.tif = tif
        self.submitted_bar = submitted_bar
        self.expires = expires
        self.status: OrderStatus = "new"
        self.filled = 0
        self.notional = 0
        self.closed_bar: int | None = None
        self.reason = reason
        self.triggered = False
        self.hit = -1
        self.scanned = submitted_bar

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
