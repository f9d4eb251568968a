"""The blotter (docs/spec.md §6): every order and fill, recorded from the bus and rooted.

A close stores the blotter's canonical bytes and its root names it in the record, so the
orders and fills are written as canonical text directly (members in JCS order, strings
as :func:`.wire.quote` writes them but for the engine's ids and the tape's times, of
which JSON escapes nothing, as a frame's are: :mod:`.frame`), and hashed from that text
(:mod:`.spliced`). The object (a proof carries it, a caller may read it) is
made when asked, once, from that very text, unchecked, by the builder a frame's object
is made with (:func:`kestrel_protocol.wire.text_builder`): what ``Blotter.with_root``
makes of the same members (tests compare the two).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Final

from kestrel_protocol import Blotter
from kestrel_protocol.wire import text_builder

from .orders import Fill, LiveOrder, order_links
from .scaled import Terms
from .spliced import rooted_bytes
from .wire import json_or_null, quote

__all__ = ["BlotterRecorder"]

_KIND: Final = b'"kestrel.blotter"'
_BUILD: Final = text_builder(Blotter)
"""A blotter object from its canonical text, unchecked."""


def _linked(links: dict[str, str], key: str) -> str:
    """A link member's canonical text, or nothing when the order has none."""
    value = links.get(key)
    return "" if value is None else f',"{key}":{quote(value)}'


class BlotterRecorder:
    """The session's orders and fills as a blotter: ``orders`` is the engine's own list
    (every order in id order) and ``fills`` the loop's (every fill in booking order), so
    it hears no event; what it wrote is kept while the engine's change count
    (:attr:`.frame.FrameBuilder.changes`, raised by everything that moves an order) is
    what it was when written.

    An order's ``reason`` is the rejection (``insufficient-cash``,
    ``insufficient-margin`` …), who cancelled it (``statement``, ``stand-down``,
    ``closed``, ``margin-call``), the time in force that expired it, or ``stand-down`` /
    ``margin-call`` for the liquidation orders a stand-down or a margin call places;
    ``null`` otherwise.
    """

    def __init__(
        self,
        session_id: str,
        terms: Terms,
        times: Sequence[str],
        *,
        orders: list[LiveOrder],
        fills: list[Fill],
        changes: Callable[[], int],
    ) -> None:
        self._session_id = session_id
        self._terms = terms
        self._times = times
        self.orders = orders
        self.fills = fills
        self._changes = changes
        self._version = -1
        """The change count :attr:`_written` and :attr:`_built` were made at."""
        self._written: tuple[str, bytes] | None = None
        self._built: Blotter | None = None

    def retape(self, times: Sequence[str]) -> None:
        """The bar times of a forward tape grown since (:meth:`.core.SessionEngine.extend`)."""
        self._times = times

    def _current(self) -> None:
        """Drop what was written before the engine last changed."""
        version = self._changes()
        if version != self._version:
            self._written = self._built = None
            self._version = version

    def build(self) -> Blotter:
        """The rooted blotter now (made from :meth:`canonical`, kept until the engine
        changes)."""
        self._current()
        built = self._built
        if built is None:
            built = self._built = _BUILD(self.canonical())
        return built

    def root(self) -> str:
        """:meth:`build`'s root, without building it."""
        return self._write()[0]

    def canonical(self) -> bytes:
        """:meth:`build`'s canonical bytes (RFC 8785, ``root`` included)."""
        return self._write()[1]

    def _write(self) -> tuple[str, bytes]:
        self._current()
        written = self._written
        if written is None:
            terms = self._terms
            orders = _orders_text(self.orders, terms)
            fills = _fills_text(self.fills, terms, self._times)
            written = self._written = rooted_bytes(
                {
                    "kind": _KIND,
                    "session": quote(self._session_id).encode("utf-8"),
                    "orders": orders.encode(),
                    "fills": fills.encode(),
                }
            )
        return written


def _quantity_text(terms: Terms) -> Callable[[int], str]:
    """:meth:`.scaled.Terms.quantity_json` for ``terms``: ``str`` itself where every
    quantity is whole (a blotter writes three quantities an order)."""
    return terms.quantity_json if terms.qty_scale else str


def _orders_text(orders: list[LiveOrder], terms: Terms) -> str:
    """The blotter's orders as a canonical JSON array: each order's members in JCS order,
    its links (absent on a plain order) in their places. Its id is the engine's (``o``
    and a number), and its side, type, time in force and status are words of their
    vocabularies (``Literal`` types): written without :func:`.wire.quote`. A close writes
    every order of the session, so the loop binds what it calls once."""
    quantity = _quantity_text(terms)
    average = terms.average
    texts: list[str] = []
    add = texts.append
    for o in orders:
        filled = o.filled
        closed = o.closed_bar
        avg = f'"{average(o.notional, filled)}"' if filled else "null"
        links = order_links(o)
        if links:
            group, parent = _linked(links, "group"), _linked(links, "parent")
            target, trail = _linked(links, "target"), _linked(links, "trail")
        else:  # a plain order
            group = parent = target = trail = ""
        add(
            f'{{"alias":{json_or_null(o.alias)}'
            f',"avgPrice":{avg},"closedBar":{"null" if closed is None else closed}'
            f',"filled":{quantity(filled)}{group}'
            f',"id":"{o.id}","limit":{json_or_null(o.limit)}'
            f',"line":{o.line}{parent},"qty":{quantity(o.qty)}'
            f',"reason":{json_or_null(o.reason)}'
            f',"seq":{o.seq},"side":"{o.side}","status":"{o.status}"'
            f',"stop":{json_or_null(o.stop)},"submittedBar":{o.submitted_bar}'
            f',"symbol":{quote(o.symbol)}{target},"tif":"{o.tif}"{trail},"type":"{o.type}"}}'
        )
    return f"[{','.join(texts)}]"


def _fills_text(fills: list[Fill], terms: Terms, times: Sequence[str]) -> str:
    """The blotter's fills as a canonical JSON array: a price and a fee are digits, a
    point and a sign; a fill's id and its order's are the engine's (``f`` or ``o`` and a
    number), and its time a tape's, ISO-8601 UTC (``Tape.times``, each row read matched
    against ``tape_format.TIME_FORM``), none of whose characters JSON escapes: written as
    they are, as a frame writes them (:mod:`.frame`)."""
    quantity = _quantity_text(terms)
    money, price = terms.money, terms.price
    texts = [
        f'{{"bar":{f.bar},"fee":"{money(f.fee)}","id":"{f.id}"'
        f',"order":"{f.order.id}","price":"{price(f.price)}"'
        f',"qty":{quantity(f.qty)},"time":"{times[f.bar]}"}}'
        for f in fills
    ]
    return f"[{','.join(texts)}]"
