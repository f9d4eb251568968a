"""The blotter (docs/spec.md §6): every order and fill, recorded from the bus and rooted.

The orders and fills are written in wire form, encoded once for the root
(:mod:`.spliced`), and the objects built from the same members unchecked
(:func:`.wire.construct`), as a frame's are: a blotter holds an order and a fill per
trade, and validating each again was most of a session's close.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from typing import Any, Final

from kestrel_protocol import Blotter, BlotterFill, BlotterOrder, canonical_json

from .bus import Event
from .orders import Fill, LiveOrder, order_links
from .scaled import Terms
from .spliced import rooted_bytes
from .wire import builder, construct

__all__ = ["BlotterRecorder"]

_KIND: Final = canonical_json("kestrel.blotter")
_WIRE_NAMES: Final = {
    "avg_price": "avgPrice",
    "submitted_bar": "submittedBar",
    "closed_bar": "closedBar",
}
"""An order's members whose wire name is not its field name (a fill's are all the same)."""


class BlotterRecorder:
    """Bus subscriber keeping orders (on ``accepted``) and fills (on ``fill``).

    An order's ``reason`` is the rejection (``insufficient-cash``,
    ``insufficient-margin`` …), who cancelled it (``statement``, ``stand-down``,
    ``closed``, ``margin-call``), the time in force that expired it, or ``stand-down`` /
    ``margin-call`` for the liquidation orders a stand-down or a margin call places;
    ``null`` otherwise.
    """

    def __init__(self, session_id: str, terms: Terms, times: Sequence[str]) -> None:
        self._session_id = session_id
        self._terms = terms
        self._times = times
        self.orders: list[LiveOrder] = []
        self.fills: list[Fill] = []
        self._cache: tuple[Blotter, bytes] | None = None

    def retape(self, times: Sequence[str]) -> None:
        """The bar times of a forward tape grown since (:meth:`.core.SessionEngine.extend`)."""
        self._times = times

    def on_event(self, event: Event) -> None:
        self._cache = None
        if event.type == "accepted" and event.order is not None:
            self.orders.append(event.order)
        elif event.type == "fill" and event.fill is not None:
            self.fills.append(event.fill)

    def _order(self, o: LiveOrder) -> dict[str, Any]:
        terms = self._terms
        avg = terms.price_of(Fraction(o.notional, o.filled)) if o.filled else None
        return {
            "id": o.id,
            "alias": o.alias,
            "seq": o.seq,
            "line": o.line,
            "side": o.side,
            "qty": terms.quantity(o.qty),
            "symbol": o.symbol,
            "type": o.type,
            "limit": o.limit,
            "stop": o.stop,
            "tif": o.tif,
            "status": o.status,
            "filled": terms.quantity(o.filled),
            "avg_price": avg,
            "submitted_bar": o.submitted_bar,
            "closed_bar": o.closed_bar,
            "reason": o.reason,
        } | order_links(o)

    def _fill(self, f: Fill) -> dict[str, Any]:
        return {
            "id": f.id,
            "order": f.order.id,
            "bar": f.bar,
            "time": self._times[f.bar],
            "qty": self._terms.quantity(f.qty),
            "price": self._terms.price(f.price),
            "fee": self._terms.money(f.fee),
        }

    def build(self) -> Blotter:
        """The rooted blotter now (cached until the next event)."""
        return self._built()[0]

    def canonical(self) -> bytes:
        """:meth:`build`'s canonical bytes (RFC 8785, ``root`` included)."""
        return self._built()[1]

    def _built(self) -> tuple[Blotter, bytes]:
        if self._cache is None:
            orders = [self._order(o) for o in self.orders]
            fills = [self._fill(f) for f in self.fills]
            names = _WIRE_NAMES
            root, text = rooted_bytes(
                {
                    "kind": _KIND,
                    "session": canonical_json(self._session_id),
                    "orders": canonical_json(
                        [{names.get(k, k): v for k, v in o.items()} for o in orders]
                    ),
                    "fills": canonical_json(fills),
                }
            )
            order, fill = builder(BlotterOrder), builder(BlotterFill)
            members = {
                "kind": "kestrel.blotter",
                "session": self._session_id,
                "orders": [order(o) for o in orders],
                "fills": [fill(f) for f in fills],
                "root": root,
            }
            self._cache = (construct(Blotter, members), text)
        return self._cache
