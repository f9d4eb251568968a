"""Frames (docs/spec.md §6 SessionFrame) built from engine state and the bus's events.

A frame is rebuilt on every step, so this module is the engine's hot path. The engine
writes each frame as its canonical JSON text alone, from exact integers, keys in sorted
order: the text is what faces send (spliced, not re-serialised) and what the frame's
root hashes. No protocol object is made on the step: a caller that reads the frame as an
object has it built when it asks, once (:mod:`.frame_models`). Parts that did not
change since the previous frame (the scenario reference, the marks of the same bar, an
unchanged account, position or open order) are reused, and a bar's parts (its bars,
clock and marks) are written once for every session of the scenario in the process
(a training loop's episodes replay one tape).

A sealed session's frames (``sealed``) have no ``clock.remaining``, which tells the
tape's length: the text, and so the root, is of the frame as served.

Equality of the text with RFC 8785 holds because every member is an integer, ``null``
or a string written as :func:`quote` writes it, or a tape's time, which it writes as it
is (the tests compare the engine's roots with ``kestrel_protocol.root_of`` on every
frame of pinned sessions).
"""

from __future__ import annotations

from array import array
from collections.abc import Callable
from fractions import Fraction
from operator import attrgetter
from typing import TYPE_CHECKING, Any, Final, TypeVar

from kestrel_protocol import SessionFrame
from kestrel_protocol.objects.session import SessionStatus

from ..catalog.model import LoadedScenario
from ..frame_values import FrameValues
from .account import Account
from .bar_parts import BarParts, bar_parts
from .bus import Event
from .frame_account import AccountParts
from .frame_models import Bars, FrameModels, Written
from .frame_orders import OrderParts
from .framed_news import FramedNews
from .orders import LiveOrder
from .scaled import Terms, money_text
from .wire import PriceTexts, quote

__all__ = ["FrameBuilder"]

T = TypeVar("T")

_TYPE: Final = attrgetter("type")
"""An event's type."""

_NO_EVENTS: list[Event] = []
"""The events of a frame without any (never appended to)."""


if TYPE_CHECKING:
    Columns = tuple[array[int], array[int], array[int], array[int], array[int]]


class FrameBuilder:
    """Collects frame events from the bus and builds each frame's canonical text."""

    def __init__(
        self,
        session_id: str,
        loaded: LoadedScenario,
        terms: Terms,
        cols: dict[str, Columns],
        *,
        sealed: bool = False,
    ) -> None:
        self._session_id = session_id
        self._sealed = sealed
        """Frames without ``clock.remaining`` (the tape's length), their roots too."""
        self._terms = terms
        self._cols = cols
        self._times = loaded.tape.times
        self._volume = loaded.tape.volume_member
        self._symbols = loaded.tape.symbols
        self._news = None if loaded.news is None else FramedNews(loaded.news, loaded.news_in_frame)
        """The newest news items visible at each clock (a scenario with news only)."""
        scenario = loaded.scenario
        self._tail = (
            f',"scenario":{{"id":{quote(scenario.id)},"root":{quote(scenario.root)}}},"seq":'
        )
        self._session_status = f',"session":{quote(session_id)},"status":"'
        self._symbol_json = {s: quote(s) for s in self._symbols}
        self._symbol_heads = [
            (s, f'{self._symbol_json[s]}:"', f'{self._symbol_json[s]}:{{"close":"')
            for s in sorted(self._symbols)
        ]
        """Per symbol in canonical order: its marks member's head and its bar's."""
        self._pending_json: list[str] = []
        self._pending: list[Event] = []
        self.changes = 0
        """Counts the engine's changes: raised when one begins (:meth:`changing`) and
        when the frame after it is built; a frame's object is made from the engine's
        state only while this is what it was when the frame was built."""
        self._seen: tuple[Any, ...] = ()
        self._model_bar: tuple[int, Bars, dict[str, str]] = (-1, {}, {})
        """The bar whose texts :meth:`_marks_at` wrote last: its OHLCV texts per symbol
        (for an object asked) and its marks (for values asked)."""
        self._bar_parts = bar_parts(loaded, sealed)
        self._models = FrameModels(session_id, scenario.id, scenario.root, terms)
        self._volume_scale = loaded.tape.volume_scale
        self._marks_bar = self._marks_last = -1
        self._before_events = self._after_events = ""
        self._time = ""
        self._prices = PriceTexts(10 ** (terms.scale - terms.price_scale), terms.price_scale)
        self._money_scale = terms.money_scale
        # a quantity as objects carry it and as JSON: the integer itself when lots are whole
        self._quantity: Callable[[int], int | str] = terms.quantity if terms.qty_scale else int
        self._quantity_json: Callable[[int], str] = terms.quantity_json if terms.qty_scale else str
        self._account = AccountParts(terms)
        # each symbol's last position: qty, basis, mark, its text, unrealized and average,
        # and its text before the unrealized amount
        self._positions: dict[str, Written] = {}
        self._orders = OrderParts(terms)

    def on_event(self, event: Event) -> None:
        """Bus subscriber: the event as the next frame will show it."""
        # canonical key order: bar, fee, order, price, qty, reason, type; an order's id
        # is the engine's ``o<n>`` and a type one of EventType's words (neither needs
        # escaping); a reason may be any text (a margin call's names amounts)
        fill = event.fill
        order = event.order
        qty = event.qty
        reason = event.reason
        if fill is None:
            fee = price = ""
        else:
            fee = f',"fee":"{money_text(fill.fee, self._money_scale)}"'
            price = f',"price":"{self._prices.text(fill.price)}"'
        order_id = "" if order is None else f',"order":"{order.id}"'
        shares = "" if qty is None else f',"qty":{self._quantity_json(qty)}'
        why = "" if reason is None else f',"reason":{quote(reason)}'
        self._pending_json.append(
            f'{{"bar":{event.bar}{fee}{order_id}{price}{shares}{why},"type":"{event.type}"}}'
        )
        self._pending.append(event)

    def _marks_at(self, bar: int, last: int) -> None:
        """The bars, the clock and the marks of clock bar ``bar`` of a tape whose last bar
        is ``last``, as the frame's parts before and after its events (written once per
        bar for every session of the scenario), and the same texts kept for an object or
        values asked."""
        shared = self._bar_parts
        parts = None if shared is None else shared.get((bar, last))
        if parts is None:
            parts = self._write_bar(bar, last)
            if shared is not None:
                shared.keep((bar, last), parts)
        # (the model bar: one tuple, read and replaced whole, see :meth:`_values`)
        self._before_events, self._after_events, self._time, self._model_bar = parts
        self._marks_bar = bar
        self._marks_last = last

    def _write_bar(self, bar: int, last: int) -> BarParts:
        """:meth:`_marks_at`'s parts of ``bar``, written."""
        texts = self._prices.bar
        cols = self._cols
        shown = self._volume if self._volume_scale else None
        bars = marks = comma = ""
        values: Bars = {}
        closes: dict[str, str] = {}
        for s, mark_head, bar_head in self._symbol_heads:
            o, h, lo, c, v = cols[s]
            op, hi, low, close = texts(o[bar], h[bar], lo[bar], c[bar])
            # an int, or the decimal text of a fractional tape (one JSON type per tape)
            volume: int | str
            volume_json: int | str
            if shown is None:
                volume = volume_json = v[bar]
            else:
                volume = shown(v[bar])
                volume_json = f'"{volume}"'
            values[s] = (op, hi, low, close, volume)
            closes[s] = close
            # canonical key order: close, high, low, open, volume
            bars = (
                f'{bars}{comma}{bar_head}{close}","high":"{hi}","low":"{low}","open":"{op}"'
                f',"volume":{volume_json}}}'
            )
            marks = f'{marks}{comma}{mark_head}{close}"'
            comma = ","
        time = self._times[bar]
        # a sealed session's clock has no "remaining" (it tells the tape's length)
        remaining = "" if self._sealed else f',"remaining":{last - bar}'
        # the frame from "bars" to its events, and its "kind" and marks after them; a
        # tape's time is ISO-8601 UTC (``Tape.times``, each row read matched against
        # ``tape_format.TIME_FORM``), none of whose characters JSON escapes: no quote()
        return (
            f',"bars":{{{bars}}},"clock":{{"bar":{bar}{remaining},"time":"{time}"}},"events":[',
            f'],"kind":"kestrel.frame","marks":{{{marks}}}',
            time,
            (bar, values, closes),
        )

    def _position(
        self, symbol: str, qty: int, basis: Fraction | int, mark: int, unrealized: Fraction | int
    ) -> tuple[str, str, str]:
        """The position's text, its unrealized amount's and its average price's (the
        text up to the unrealized amount kept while the quantity and basis are, the rest
        while the mark is too)."""
        cached = self._positions.get(symbol)
        if cached is not None and cached[0] == qty and cached[1] == basis:
            if cached[2] == mark:
                return cached[3], cached[4], cached[5]
            avg = cached[5]
            head = cached[6]
        else:
            avg = self._terms.average(basis, qty)
            head = (
                f'{{"avgPrice":"{avg}","qty":{self._quantity_json(qty)}'
                f',"symbol":{self._symbol_json[symbol]},"unrealized":"'
            )
        shown = money_text(unrealized, self._money_scale)
        text = f'{head}{shown}"}}'
        self._positions[symbol] = (qty, basis, mark, text, shown, avg, head)
        return text, shown, avg

    def retape(self, loaded: LoadedScenario, cols: dict[str, Columns]) -> None:
        """The columns and times of a forward tape grown since (the bar cached for the
        marks stays right: published bars never change)."""
        self._cols = cols
        self._times = loaded.tape.times
        self._volume = loaded.tape.volume_member
        self._volume_scale = loaded.tape.volume_scale
        self._bar_parts = bar_parts(loaded, self._sealed)

    def build(
        self,
        *,
        seq: int,
        clock: int,
        last: int,
        status: SessionStatus,
        account: Account,
        peak: int,
        open_orders: list[LiveOrder],
        tape: str | None = None,
    ) -> str:
        """The frame of the session now as canonical text; ``tape`` (a forward
        session's) the root of the prefix it was shown."""
        equity = account.cash
        holdings = account.holdings
        unrealized_total: Fraction | int
        unrealized_text: str | None
        if not holdings:
            unrealized_total = 0
            unrealized_text = "0.00"
            positions_json = ""
        elif len(holdings) == 1:
            # one position: the account's unrealized is that position's, text and all
            ((symbol, held),) = holdings.items()
            mark = self._cols[symbol][3][clock]
            value = held.qty * mark
            equity += value
            unrealized_total = value - held.basis
            positions_json, unrealized_text, _ = self._position(
                symbol, held.qty, held.basis, mark, unrealized_total
            )
        else:
            cols = self._cols
            unrealized_total = 0
            unrealized_text = None
            texts: list[str] = []
            for symbol in self._symbols:
                entry = holdings.get(symbol)
                if entry is None:
                    continue
                mark = cols[symbol][3][clock]
                value = entry.qty * mark
                equity += value
                unrealized = value - entry.basis
                unrealized_total += unrealized
                texts.append(self._position(symbol, entry.qty, entry.basis, mark, unrealized)[0])
            positions_json = ",".join(texts)
        state_json = self._account.state(account, equity, unrealized_total, unrealized_text, peak)
        if open_orders:
            orders_json = ",".join([self._orders.part(o) for o in open_orders])
            self._orders.forget_closed(open_orders)
        else:
            orders_json = ""
        events = self._pending
        if events:
            events_json = ",".join(self._pending_json)
            self._pending_json = []
            self._pending = []
        else:
            events = _NO_EVENTS  # the pending list goes on collecting the next frame's
            events_json = ""
        if clock != self._marks_bar or last != self._marks_last:
            self._marks_at(clock, last)
        time = self._time
        tape_json = "" if tape is None else f',"tape":"{tape}"'
        news = self._news
        news_json = "" if news is None else news.at(time)
        # what the text is written from, for :meth:`model` (no object made here; the
        # account and the orders are the engine's, unchanged while this frame is its last)
        self.changes += 1
        self._seen = (
            seq,
            clock,
            None if self._sealed else last - clock,
            time,
            status,
            tape,
            account,
            open_orders,
            events,
            None if news is None else news.shown,
        )
        return (
            f'{{"account":{state_json}{self._before_events}{events_json}{self._after_events}'
            f"{news_json}"
            f',"orders":[{orders_json}],"positions":[{positions_json}]'
            f'{self._tail}{seq}{self._session_status}{status}"{tape_json}}}'
        )

    def change_count(self) -> int:
        """:attr:`changes` now (for a reader keeping what it made while it holds)."""
        return self.changes

    def changing(self) -> None:
        """The engine begins to change (a submission, a close, a tape grown): the last
        frame's object can no longer be made from its state."""
        self.changes += 1

    def model(self, version: int) -> SessionFrame | None:
        """The object of the frame built at :attr:`changes` ``version``, made from what
        its text was written from; ``None`` once the engine began to change since (the
        frame's text is then the frame)."""
        return self._unchanged(version, self._model)

    def values(self, version: int) -> FrameValues | None:
        """The plain values of the frame built at :attr:`changes` ``version`` (as
        :meth:`model`, ``None`` once the engine began to change since)."""
        return self._unchanged(version, self._values)

    def _unchanged(self, version: int, make: Callable[[], T]) -> T | None:
        """What ``make`` reads of the engine's state, kept only if no change began since
        ``version`` nor while it read: safe beside a thread changing the engine."""
        if version != self.changes:
            return None
        try:
            made = make()
        except (KeyError, IndexError):  # the engine changed under it: the text is the frame
            if version == self.changes:
                raise
            return None
        return made if version == self.changes else None

    def _values(self) -> FrameValues:
        _, clock, _, time, status, _, account, _, events, _ = self._seen
        bar, _, closes = self._model_bar  # one tuple, read whole (see :meth:`_bars_at`)
        if bar != clock:
            raise KeyError(clock)
        holdings = account.holdings
        positions: dict[str, int | str] = {}
        if holdings:
            quantity = self._quantity
            for s in self._symbols:  # in the frame's order
                held = holdings.get(s)
                if held is not None:
                    positions[s] = quantity(held.qty)
        texts = self._account.texts
        return FrameValues(  # session, bar, time, status, cash, equity, positions, marks, events
            self._session_id,
            clock,
            time,
            status,
            texts[0],
            texts[2],
            positions,
            closes.copy(),  # the caller's own: the next step of this bar keeps its own
            tuple(map(_TYPE, events)) if events else (),
        )

    def _model(self) -> SessionFrame:
        seen = self._seen
        bar, bars, _ = self._model_bar  # one tuple, read and replaced whole (see frame_models)
        if bar != seen[1]:  # the kept bar is another: the engine changed meanwhile
            raise KeyError(bar)
        holdings = seen[6].holdings
        positions = []
        if holdings:
            written = self._positions
            for symbol in self._symbols:  # each held one, as the text was written
                if symbol in holdings:
                    positions.append((symbol, written[symbol]))
        return self._models.frame(seen, positions, self._account.texts, bars)
