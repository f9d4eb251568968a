"""A frame's open orders (docs/spec.md §6 FrameOrder): each order's model and canonical
text, its links (group, parent, target, trail) in their places, reused while the order
is unchanged. Part of :class:`~.frame.FrameBuilder`."""

from __future__ import annotations

from typing import Any

from kestrel_protocol import FrameOrder

from .orders import LiveOrder, order_links
from .scaled import Terms
from .wire import builder, json_or_null, quote

__all__ = ["OrderParts"]

_new_order = builder(FrameOrder)


def _linked(links: dict[str, str], key: str) -> str:
    """A link member's canonical text, or nothing when the order has none."""
    value = links.get(key)
    return "" if value is None else f',"{key}":{quote(value)}'


class OrderParts:
    """The open orders' parts of frames, cached per order (by its identity)."""

    def __init__(self, terms: Terms) -> None:
        self._terms = terms
        self._orders: dict[int, tuple[tuple[Any, ...], FrameOrder | None, str]] = {}

    def part(self, o: LiveOrder, *, models: bool) -> tuple[FrameOrder | None, str]:
        """The order's model (``None`` without ``models``) and canonical text."""
        cached = self._orders.get(id(o))
        key = (o.filled, o.status, o.qty, o.stop_p)
        if cached is not None and cached[0] == key and (cached[1] is not None or not models):
            return cached[1], cached[2]
        links = order_links(o)
        terms = self._terms
        members = {
            "id": o.id,
            "alias": o.alias,
            "side": o.side,
            "qty": terms.quantity(o.qty),
            "filled": terms.quantity(o.filled),
            "symbol": o.symbol,
            "type": o.type,
            "limit": o.limit,
            "stop": o.stop,
            "tif": o.tif,
            "status": o.status,
        }
        model = None if not models else _new_order(members | links)
        # canonical key order; the links (absent on a plain order) in their places
        text = "".join(
            (
                f'{{"alias":{json_or_null(o.alias)},"filled":{terms.quantity_json(o.filled)}',
                _linked(links, "group"),
                f',"id":{quote(o.id)},"limit":{json_or_null(o.limit)}',
                _linked(links, "parent"),
                f',"qty":{terms.quantity_json(o.qty)},"side":{quote(o.side)}',
                f',"status":{quote(o.status)}',
                f',"stop":{json_or_null(o.stop)},"symbol":{quote(o.symbol)}',
                _linked(links, "target"),
                f',"tif":{quote(o.tif)}',
                _linked(links, "trail"),
                f',"type":{quote(o.type)}}}',
            )
        )
        self._orders[id(o)] = (key, model, text)
        return model, text

    def forget_closed(self, open_orders: list[LiveOrder]) -> None:
        """Drop the parts of orders no longer open, once there are many of them."""
        if len(self._orders) > 4 * len(open_orders) + 64:
            live = {id(o) for o in open_orders}
            self._orders = {k: v for k, v in self._orders.items() if k in live}
