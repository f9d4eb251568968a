"""Frames (docs/spec.md §6 SessionFrame) built from engine state and the bus's events.

A frame is rebuilt on every step, and the service hashes every one, so this module is
the engine's hot path. Each part is produced once, from exact integers, in two forms at
the same time: the pydantic model an agent reads (built by :func:`~.wire.builder`'s validator, since
every member already has its wire form) and its canonical JSON text (keys written in
sorted order). The frame's root is then the sha256 of that text, with no model dump and
no generic encoder. Parts that did not change since the previous frame (the scenario
reference, the marks of the same bar, an unchanged account, position or open order)
are reused in both forms.

A replay (grading, verifying, resuming a session) needs only each frame's root, so a
builder with :attr:`FrameBuilder.models` off makes the text alone; the engine parses
that text into a model if the frame is read after all (the text is the frame).

A sealed session's frames (``sealed``) have no ``clock.remaining``, which tells the
tape's length: the text, and so the root, is of the frame as served.

Equality of the text with RFC 8785 holds because every member is an integer, ``null``
or a string written as :func:`quote` writes it (the tests compare the engine's roots
with ``kestrel_protocol.root_of`` on every frame of pinned sessions).
"""

from __future__ import annotations

from array import array
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from kestrel_protocol import (
    Clock,
    FrameBar,
    FrameEvent,
    Position,
    ScenarioRef,
    SessionFrame,
)
from kestrel_protocol.objects.session import SessionStatus

from ..catalog.model import LoadedScenario
from .account import Account
from .bus import Event
from .frame_account import AccountParts
from .frame_orders import OrderParts
from .framed_news import FramedNews
from .orders import LiveOrder
from .scaled import Terms
from .wire import PriceTexts, builder, construct, quote

__all__ = ["FrameBuilder"]


_new_event = builder(FrameEvent)
_new_bar = builder(FrameBar)
_new_position = builder(Position)
_new_clock = builder(Clock)
_new_frame = builder(SessionFrame)


if TYPE_CHECKING:
    Columns = tuple[array[int], array[int], array[int], array[int], array[int]]


class FrameBuilder:
    """Collects frame events from the bus and builds each frame: its canonical text and,
    while :attr:`models` is on, its model."""

    def __init__(
        self,
        session_id: str,
        loaded: LoadedScenario,
        terms: Terms,
        cols: dict[str, Columns],
        *,
        sealed: bool = False,
    ) -> None:
        self.models = True
        """Whether frames are built as models too (off: the text alone, for a replay).
        Switched only between submissions (events of one are built in one mode)."""
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
        self._scenario = construct(ScenarioRef, {"id": scenario.id, "root": scenario.root})
        self._tail = (
            f',"scenario":{{"id":{quote(scenario.id)},"root":{quote(scenario.root)}}},"seq":'
        )
        self._session_json = quote(session_id)
        self._symbol_json = {s: quote(s) for s in self._symbols}
        self._pending: list[FrameEvent] = []
        self._pending_json: list[str] = []
        self._marks_bar = -1
        self._marks_models = False  # whether the bar's FrameBar models were built
        self._marks: dict[str, str] = {}
        self._marks_json = ""
        self._bars: dict[str, FrameBar] = {}
        self._bars_json = ""
        self._time = ""
        self._time_json = ""
        self._sorted_symbols = sorted(self._symbols)
        self._prices = PriceTexts(10 ** (terms.scale - terms.price_scale), terms.price_scale)
        self._account = AccountParts(terms)
        # each cached part is (model, text); its model is None when built for a replay
        self._positions: dict[str, tuple[tuple[Any, ...], Position | None, str, str]] = {}
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
        if not self.models:
            return
        # only the members the event has: the others keep their defaults (null) and
        # stay out of the model's fields set, as when the event is read from JSON
        members: dict[str, Any] = {"type": event.type, "bar": event.bar}
        if order is not None:
            members["order"] = order.id
        if event.qty is not None:
            members["qty"] = self._terms.quantity(event.qty)
        if fill is not None:
            members["price"] = price
            members["fee"] = fee
        if event.reason is not None:
            members["reason"] = event.reason
        self._pending.append(_new_event(members))

    def _marks_at(self, bar: int) -> tuple[dict[str, str], str, str, str]:
        """The marks and time of a bar, each as a value and as JSON (cached per bar);
        the bar's OHLCV (:attr:`_bars`) is made with them. Without :attr:`models`, the
        marks come back empty (a replay reads the text alone)."""
        models = self.models
        if bar == self._marks_bar and (self._marks_models or not models):
            marks = dict(self._marks) if models else self._marks
            return marks, self._marks_json, self._time, self._time_json
        prices = self._prices
        cols = self._cols
        quoted = self._symbol_json
        shown = self._volume
        marks = {}
        bars: dict[str, FrameBar] = {}
        marks_parts: list[str] = []
        bars_parts: list[str] = []
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
            if models:
                marks[s] = close
                bars[s] = _new_bar(
                    {"open": op, "high": hi, "low": low, "close": close, "volume": volume}
                )
            marks_parts.append(f'{quoted[s]}:"{close}"')
            # canonical key order: close, high, low, open, volume
            bars_parts.append(
                f'{quoted[s]}:{{"close":"{close}","high":"{hi}","low":"{low}"'
                f',"open":"{op}","volume":{volume_json}}}'
            )
        self._marks_json = "{" + ",".join(marks_parts) + "}"
        self._bars_json = "{" + ",".join(bars_parts) + "}"
        self._marks = marks
        self._bars = bars
        self._time = self._times[bar]
        self._time_json = quote(self._time)
        self._marks_bar = bar
        self._marks_models = models
        return (dict(marks) if models else marks), self._marks_json, self._time, self._time_json

    def _average(self, symbol: str, qty: int, basis: Fraction | int) -> str:
        cached = self._averages.get(symbol)
        if cached is not None and cached[0] == qty and cached[1] == basis:
            return cached[2]
        text = self._terms.average(basis, qty)
        self._averages[symbol] = (qty, basis, text)
        return text

    def _position(
        self, symbol: str, qty: int, basis: Fraction | int, mark: int, unrealized: Fraction | int
    ) -> tuple[Position | None, str, str]:
        """The position's model (``None`` without :attr:`models`), text and unrealized."""
        key = (qty, basis, mark)
        cached = self._positions.get(symbol)
        if cached is not None and cached[0] == key and (cached[1] is not None or not self.models):
            return cached[1], cached[2], cached[3]
        avg = self._average(symbol, qty, basis)
        shown = self._terms.money(unrealized)
        model = (
            _new_position(
                {
                    "symbol": symbol,
                    "qty": self._terms.quantity(qty),
                    "avg_price": avg,
                    "unrealized": shown,
                }
            )
            if self.models
            else None
        )
        text = (
            f'{{"avgPrice":"{avg}","qty":{self._terms.quantity_json(qty)},"symbol":{self._symbol_json[symbol]}'
            f',"unrealized":"{shown}"}}'
        )
        self._positions[symbol] = (key, model, text, shown)
        return model, text, shown

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
    ) -> tuple[SessionFrame | None, str]:
        """The frame of the session now: its model (``None`` without :attr:`models`) and
        its canonical text; ``tape`` (a forward session's) the root of the prefix it was
        shown."""
        equity = account.cash
        holdings = account.holdings
        unrealized_total: Fraction | int
        positions: list[Any]  # Position models (None each without models)
        unrealized_text: str | None
        if not holdings:
            unrealized_total = 0
            unrealized_text = "0.00"
            positions = []
            positions_json = ""
        elif len(holdings) == 1:
            # one position: the account's unrealized is that position's, text and all
            ((symbol, held),) = holdings.items()
            mark = self._cols[symbol][3][clock]
            value = held.qty * mark
            equity += value
            unrealized_total = value - held.basis
            model, positions_json, unrealized_text = self._position(
                symbol, held.qty, held.basis, mark, unrealized_total
            )
            positions = [model]
        else:
            cols = self._cols
            unrealized_total = 0
            unrealized_text = None
            positions = []
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
                model, text, _ = self._position(symbol, entry.qty, entry.basis, mark, unrealized)
                positions.append(model)
                texts.append(text)
            positions_json = ",".join(texts)
        state, state_json = self._account.state(
            account, equity, unrealized_total, unrealized_text, peak, models=self.models
        )
        if open_orders:
            models = self.models
            shown = [self._orders.part(o, models=models) for o in open_orders]
            orders = [model for model, _ in shown]
            orders_json = ",".join(text for _, text in shown)
            self._orders.forget_closed(open_orders)
        else:
            orders = []
            orders_json = ""
        if self._pending_json:
            events = self._pending
            self._pending = []
            events_json = ",".join(self._pending_json)
            self._pending_json = []
        else:
            events = []  # a fresh list: the pending one goes on collecting
            events_json = ""
        remaining = None if self._sealed else last - clock
        remaining_json = "" if remaining is None else f',"remaining":{remaining}'
        marks, marks_json, time, time_json = self._marks_at(clock)
        tape_json = "" if tape is None else f',"tape":"{tape}"'
        news = self._news
        news_models, news_json = (None, "") if news is None else news.at(time, models=self.models)
        text = (
            f'{{"account":{state_json},"bars":{self._bars_json},"clock":{{"bar":{clock}{remaining_json}'
            f',"time":{time_json}}},"events":[{events_json}],"kind":"kestrel.frame"'
            f',"marks":{marks_json}{news_json},"orders":[{orders_json}]'
            f',"positions":[{positions_json}]'
            f'{self._tail}{seq},"session":{self._session_json},"status":"{status}"{tape_json}}}'
        )
        if not self.models:
            return None, text
        members: dict[str, Any] = {} if news_models is None else {"news": news_models}
        frame = _new_frame(
            {
                **members,
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
                "marks": marks,
                "bars": dict(self._bars),
                "account": state,
                "positions": positions,
                "orders": orders,
                "events": events,
                **({} if tape is None else {"tape": tape}),
            }
        )
        return frame, text
