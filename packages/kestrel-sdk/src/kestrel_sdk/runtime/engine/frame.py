"""Frames (docs/spec.md §6 SessionFrame) built from engine state and the bus's events.

A frame is rebuilt on every step, so this module is the engine's hot path. The engine
writes each frame as its canonical JSON text alone, from exact integers, keys in sorted
order: the text is what faces send (spliced, not re-serialised) and what the frame's
root hashes. No protocol object is made on the step: a caller that reads the frame as an
object has it built when it asks, once (:mod:`.frame_models`). Parts that did not
change since the previous frame (the scenario reference, the marks of the same bar, an
unchanged account, position or open order) are reused.

A sealed session's frames (``sealed``) have no ``clock.remaining``, which tells the
tape's length: the text, and so the root, is of the frame as served.

Equality of the text with RFC 8785 holds because every member is an integer, ``null``
or a string written as :func:`quote` writes it (the tests compare the engine's roots
with ``kestrel_protocol.root_of`` on every frame of pinned sessions).
"""

from __future__ import annotations

from array import array
from collections.abc import Callable
from fractions import Fraction
from typing import TYPE_CHECKING, Any, TypeVar

from kestrel_protocol import SessionFrame
from kestrel_protocol.objects.session import SessionStatus

from ..catalog.model import LoadedScenario
from ..frame_values import FrameValues
from .account import Account
from .bus import Event
from .frame_account import AccountParts
from .frame_models import FrameModels
from .frame_orders import OrderParts
from .framed_news import FramedNews
from .orders import LiveOrder
from .scaled import Terms
from .wire import PriceTexts, quote

__all__ = ["FrameBuilder"]

T = TypeVar("T")

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
        self._session_json = quote(session_id)
        self._symbol_json = {s: quote(s) for s in self._symbols}
        self._pending_json: list[str] = []
        self._pending: list[Event] = []
        self.changes = 0
        """Counts the engine's changes: raised when one begins (:meth:`changing`) and
        when the frame after it is built; a frame's object is made from the engine's
        state only while this is what it was when the frame was built."""
        self._seen: tuple[Any, ...] = ()
        self._model_bar: tuple[int, dict[str, tuple[str, str, str, str, int | str]]] = (-1, {})
        self._models = FrameModels(session_id, scenario.id, scenario.root, terms)
        self._marks_bar = -1
        self._marks_json = ""
        self._bars_json = ""
        self._time = ""
        self._time_json = ""
        self._sorted_symbols = sorted(self._symbols)
        self._prices = PriceTexts(10 ** (terms.scale - terms.price_scale), terms.price_scale)
        self._account = AccountParts(terms)
        # each cached position: (qty, basis, mark), its text, its unrealized and average
        self._positions: dict[str, tuple[tuple[Any, ...], str, str, str]] = {}
        self._averages: dict[str, tuple[int, Fraction | int, str]] = {}
        self._orders = OrderParts(terms)

    def on_event(self, event: Event) -> None:
        """Bus subscriber: the event as the next frame will show it."""
        # canonical key order: bar, fee, order, price, qty, reason, type
        parts = [f'{{"bar":{event.bar}']
        fill = event.fill
        price = fee = None
        if fill is not None:
            price = self._terms.price(fill.price)
            fee = self._terms.money(fill.fee)
            parts.append(f',"fee":"{fee}"')
        order = event.order
        if order is not None:
            parts.append(f',"order":{quote(order.id)}')
        if price is not None:
            parts.append(f',"price":"{price}"')
        if event.qty is not None:
            parts.append(f',"qty":{self._terms.quantity_json(event.qty)}')
        if event.reason is not None:
            parts.append(f',"reason":{quote(event.reason)}')
        parts.append(f',"type":{quote(event.type)}}}')
        self._pending_json.append("".join(parts))
        self._pending.append(event)

    def _marks_at(self, bar: int) -> tuple[str, str, str]:
        """The marks, the time and the bars of a bar as JSON (cached per bar)."""
        if bar == self._marks_bar:
            return self._marks_json, self._time, self._time_json
        prices = self._prices
        cols = self._cols
        quoted = self._symbol_json
        shown = self._volume
        marks_parts: list[str] = []
        bars_parts: list[str] = []
        values: dict[str, tuple[str, str, str, str, int | str]] = {}
        for s in self._sorted_symbols:
            o, h, lo, c, v = cols[s]
            op, hi, low, close = (
                prices.text(o[bar]),
                prices.text(h[bar]),
                prices.text(lo[bar]),
                prices.text(c[bar]),
            )
            volume = shown(v[bar])  # an int, or the decimal text of a fractional tape
            volume_json = volume if isinstance(volume, int) else f'"{volume}"'
            values[s] = (op, hi, low, close, volume)
            marks_parts.append(f'{quoted[s]}:"{close}"')
            # canonical key order: close, high, low, open, volume
            bars_parts.append(
                f'{quoted[s]}:{{"close":"{close}","high":"{hi}","low":"{low}"'
                f',"open":"{op}","volume":{volume_json}}}'
            )
        self._marks_json = "{" + ",".join(marks_parts) + "}"
        self._bars_json = "{" + ",".join(bars_parts) + "}"
        self._time = self._times[bar]
        self._time_json = quote(self._time)
        self._marks_bar = bar
        self._model_bar = (bar, values)  # the same texts, for an object or values asked
        return self._marks_json, self._time, self._time_json

    def _average(self, symbol: str, qty: int, basis: Fraction | int) -> str:
        cached = self._averages.get(symbol)
        if cached is not None and cached[0] == qty and cached[1] == basis:
            return cached[2]
        text = self._terms.average(basis, qty)
        self._averages[symbol] = (qty, basis, text)
        return text

    def _position(
        self, symbol: str, qty: int, basis: Fraction | int, mark: int, unrealized: Fraction | int
    ) -> tuple[str, str, str]:
        """The position's text, its unrealized amount's and its average price's."""
        key = (qty, basis, mark)
        cached = self._positions.get(symbol)
        if cached is not None and cached[0] == key:
            return cached[1], cached[2], cached[3]
        avg = self._average(symbol, qty, basis)
        shown = self._terms.money(unrealized)
        text = (
            f'{{"avgPrice":"{avg}","qty":{self._terms.quantity_json(qty)},"symbol":{self._symbol_json[symbol]}'
            f',"unrealized":"{shown}"}}'
        )
        self._positions[symbol] = (key, text, shown, avg)
        return text, shown, avg

    def retape(self, loaded: LoadedScenario, cols: dict[str, Columns]) -> None:
        """The columns and times of a forward tape grown since (the bar cached for the
        marks stays right: published bars never change)."""
        self._cols = cols
        self._times = loaded.tape.times
        self._volume = loaded.tape.volume_member

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
        remaining = None if self._sealed else last - clock
        remaining_json = "" if remaining is None else f',"remaining":{remaining}'
        marks_json, time, time_json = self._marks_at(clock)
        tape_json = "" if tape is None else f',"tape":"{tape}"'
        news = self._news
        news_json = "" if news is None else news.at(time)
        # what the text is written from, for :meth:`model` (no object made here; the
        # account and the orders are the engine's, unchanged while this frame is its last)
        self.changes += 1
        self._seen = (
            seq,
            clock,
            remaining,
            time,
            status,
            tape,
            account,
            open_orders,
            events,
            None if news is None else news.shown,
        )
        return (
            f'{{"account":{state_json},"bars":{self._bars_json},"clock":{{"bar":{clock}{remaining_json}'
            f',"time":{time_json}}},"events":[{events_json}],"kind":"kestrel.frame"'
            f',"marks":{marks_json}{news_json},"orders":[{orders_json}]'
            f',"positions":[{positions_json}]'
            f'{self._tail}{seq},"session":{self._session_json},"status":"{status}"{tape_json}}}'
        )

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
        quantity = self._terms.quantity
        holdings = account.holdings
        positions = {s: quantity(holdings[s].qty) for s in self._symbols if s in holdings}
        return FrameValues(
            session=self._session_id,
            bar=clock,
            time=time,
            status=status,
            cash=self._account.texts[0],
            equity=self._account.texts[2],
            positions=positions,
            marks={s: bar[3] for s, bar in self._bars_at(clock).items()},
            events=tuple(event.type for event in events),
        )

    def _bars_at(self, clock: int) -> dict[str, tuple[str, str, str, str, int | str]]:
        """The texts of bar ``clock``'s OHLCV per symbol, as :meth:`_marks_at` kept them
        when it wrote the bar (a ``KeyError`` when the kept bar is another: the engine
        changed meanwhile)."""
        bar, bars = self._model_bar  # one tuple, read and replaced whole (see frame_models)
        if bar != clock:
            raise KeyError(clock)
        return bars

    def _model(self) -> SessionFrame:
        seen = self._seen
        holdings = seen[6].holdings
        positions = []
        if holdings:
            for symbol in self._symbols:  # each held one's texts, as the text was written
                held = holdings.get(symbol)
                if held is not None:
                    key, _, shown, avg = self._positions[symbol]
                    positions.append((symbol, held.qty, key, avg, shown))
        return self._models.frame(seen, positions, self._account.texts, self._bars_at(seen[1]))
