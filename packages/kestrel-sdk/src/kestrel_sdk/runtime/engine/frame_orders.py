"""A frame's open orders (docs/spec.md §6 FrameOrder): each order's canonical text,
its links (group, parent, target, trail) in their places, reused while the order is
unchanged. Part of :class:`~.frame.FrameBuilder`."""

from __future__ import annotations

from typing import Any

from .orders import LiveOrder, order_links
from .scaled import Terms
from .wire import json_or_null, quote

__all__ = ["OrderParts"]


def _linked(links: dict[str, str], key: str) -> str:
    """A link member's canonical text, or nothing when the order has none."""
    value = links.get(key)
    return "" if value is None else f',"{key}":{quote(value)}'


class OrderParts:
    """The open orders' parts of frames, cached per order (by its identity)."""

    def __init__(self, terms: Terms) -> None:
        self._terms = terms
        self._orders: dict[int, tuple[tuple[Any, ...], str]] = {}

    def part(self, o: LiveOrder) -> str:
        """The order's canonical text."""
        cached = self._orders.get(id(o))
        key = (o.filled, o.status, o.qty, o.stop_p)
        if cached is not None and cached[0] == key:
            return cached[1]
        links = order_links(o)
        terms = self._terms
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
        self._orders[id(o)] = (key, text)
        return text

    def forget_closed(self, open_orders: list[LiveOrder]) -> None:
        """Drop the parts of orders no longer open, once there are many of them."""
        if len(self._orders) > 4 * len(open_orders) + 64:
            live = {id(o) for o in open_orders}
            self._orders = {k: v for k, v in self._orders.items() if k in live}
