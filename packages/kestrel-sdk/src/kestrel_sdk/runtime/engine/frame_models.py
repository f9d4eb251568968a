"""The latest frame as an object, built only when a caller reads it.

:class:`~.frame.FrameBuilder` writes every frame as text and notes what it wrote from
(:class:`Seen`: plain values and the engine's own immutable events). While the engine
has not moved on, the frame's object is built from those values, reusing the objects of
parts that did not change since the last object was built (the scenario reference, a
bar's marks and OHLCV, an unchanged account, position or order); once it has moved on,
the frame's text is the frame (:func:`kestrel_protocol.wire.text_builder`). Either way it
is the object pydantic would validate from the text (the tests compare them).
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any, Final

from kestrel_protocol import (
    AccountState,
    Clock,
    FrameBar,
    FrameEvent,
    FrameOrder,
    NewsItem,
    Position,
    ScenarioRef,
    SessionFrame,
)

from .bus import Event
from .orders import LiveOrder, order_links
from .scaled import Terms
from .wire import PriceTexts, builder

__all__ = ["Bars", "FrameModels", "Seen", "Written"]

_new_event: Final = builder(FrameEvent)
_new_bar: Final = builder(FrameBar)
_new_position: Final = builder(Position)
_new_frame: Final = builder(SessionFrame)
_new_clock: Final = builder(Clock)
_new_account: Final = builder(AccountState)
_new_order: Final = builder(FrameOrder)
_new_item: Final = builder(NewsItem)


Seen = tuple[Any, ...]
"""What one frame's text was written from, as :class:`~.frame.FrameBuilder` notes it:
seq, clock, remaining (``None`` when sealed), time, status, tape, the engine's account,
the open orders, the events and the news items (JSON data, ``None`` without news)."""

Bars = dict[str, tuple[str, str, str, str, int | str]]
"""Per symbol, the clock bar's open, high, low, close texts and its volume."""

Written = tuple[int, Fraction | int, int, str, str, str, str]
"""A position as :class:`~.frame.FrameBuilder` last wrote it: its qty, basis and mark,
its text, unrealized amount's and average price's texts, and its text's head."""


class FrameModels:
    """Builds frames' objects from :class:`Seen` values, keeping the objects of parts
    that recur from frame to frame."""

    def __init__(self, session_id: str, scenario_id: str, scenario_root: str, terms: Terms):
        self._session_id = session_id
        self._terms = terms
        self._prices = PriceTexts(10 ** (terms.scale - terms.price_scale), terms.price_scale)
        """A fill's price as the frame's text writes it: the tape price's text, which
        :class:`~.frame.FrameBuilder` has just made and :class:`PriceTexts` remembers."""
        self._scenario = _new_frame_ref(scenario_id, scenario_root)
        # each cache one (key, objects) tuple, read and replaced whole: a reader on
        # another thread sees an old entry or a new one, never half of each
        self._bars: tuple[Bars | None, dict[str, FrameBar], dict[str, str]] = (None, {}, {})
        self._account: tuple[tuple[str, ...], AccountState | None] = ((), None)
        self._positions: dict[str, tuple[str, Position]] = {}
        self._orders: dict[int, tuple[tuple[Any, ...], FrameOrder]] = {}
        self._news: tuple[list[dict[str, Any]] | None, list[NewsItem]] = (None, [])

    def frame(
        self,
        seen: Seen,
        positions: list[tuple[str, Written]],
        account: tuple[str, ...],
        bars: Bars,
    ) -> SessionFrame:
        """The frame written from ``seen``, its ``positions`` (each held symbol and its
        position as the text wrote it, :data:`Written`), ``account`` (the amounts' texts
        in canonical order) and ``bars``, as an object."""
        seq, clock, remaining, time, status, tape, _, orders, events, news = seen
        bars_key, bar_objects, marks = self._bars
        if bars is not bars_key:
            bar_objects, marks = {}, {}
            for s, (o, h, lo, c, v) in bars.items():
                bar_objects[s] = _new_bar(
                    {"open": o, "high": h, "low": lo, "close": c, "volume": v}
                )
                marks[s] = c
            self._bars = (bars, bar_objects, marks)
        account_key, account_object = self._account
        if account is not account_key:  # the same texts (kept while the amounts are)
            if account_object is None or account != account_key:
                cash, drawdown, equity, fees, peak, realized, unrealized = account
                account_object = _new_account(
                    {
                        "cash": cash,
                        "equity": equity,
                        "realized": realized,
                        "unrealized": unrealized,
                        "fees": fees,
                        "peak": peak,
                        "drawdown": drawdown,
                    }
                )
            self._account = (account, account_object)
        members: dict[str, Any] = {
            "kind": "kestrel.frame",
            "session": self._session_id,
            "seq": seq,
            "scenario": self._scenario,
            "clock": _new_clock(
                {"bar": clock, "time": time}
                if remaining is None
                else {"bar": clock, "time": time, "remaining": remaining}
            ),
            "status": status,
            "marks": marks.copy(),
            "bars": bar_objects.copy(),
            "account": account_object,
            # map, not a comprehension: no function made and called per frame
            "positions": list(map(self._position, positions)) if positions else [],
            "orders": list(map(self._order, orders)) if orders else [],
            "events": list(map(self._event, events)) if events else [],
        }
        if news is not None:
            news_key, items = self._news
            if news is not news_key:
                items = [_new_item(d) for d in news]
                self._news = (news, items)
            members = {"news": list(items), **members}
        if tape is not None:
            members["tape"] = tape
        return _new_frame(members)

    def _position(self, held: tuple[str, Written]) -> Position:
        # every member from the one tuple the text was written from (replaced whole)
        symbol, written = held
        text = written[3]
        cached = self._positions.get(symbol)
        if cached is not None and cached[0] == text:  # the same text: the same members
            return cached[1]
        made = _new_position(
            {
                "symbol": symbol,
                "qty": self._terms.quantity(written[0]),
                "avg_price": written[5],
                "unrealized": written[4],
            }
        )
        self._positions[symbol] = (text, made)
        return made

    def _order(self, o: LiveOrder) -> FrameOrder:
        key = (o.id, o.filled, o.status, o.qty, o.stop_p)
        cached = self._orders.get(id(o))
        if cached is not None and cached[0] == key:
            return cached[1]
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
        made = _new_order(members | order_links(o))
        if len(self._orders) > 256:
            self._orders.clear()
        self._orders[id(o)] = (key, made)
        return made

    def _event(self, event: Event) -> FrameEvent:
        # only the members the event has: the others keep their defaults (null) and
        # stay out of the model's fields set, as when the event is read from JSON
        members: dict[str, Any] = {"type": event.type, "bar": event.bar}
        if event.order is not None:
            members["order"] = event.order.id
        if event.qty is not None:
            members["qty"] = self._terms.quantity(event.qty)
        fill = event.fill
        if fill is not None:
            members["price"] = self._prices.text(fill.price)
            members["fee"] = self._terms.money(fill.fee)
        if event.reason is not None:
            members["reason"] = event.reason
        return _new_event(members)


def _new_frame_ref(scenario_id: str, root: str) -> ScenarioRef:
    return builder(ScenarioRef)({"id": scenario_id, "root": root})
