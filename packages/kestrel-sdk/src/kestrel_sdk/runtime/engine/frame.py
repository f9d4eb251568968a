"""Frames (spec §6 SessionFrame) built from engine state and the bus's events.

Frames are built with ``model_construct``: every member is produced here from exact
integers and already has its wire form, so re-validating each step would only cost time.
The scenario reference and the last bar's marks are cached.
"""

from __future__ import annotations

from array import array
from typing import TYPE_CHECKING, Any, Literal

from kestrel_protocol import (
    AccountState,
    Clock,
    FrameEvent,
    FrameOrder,
    Position,
    ScenarioRef,
    SessionFrame,
)

from ..catalog.model import LoadedScenario
from .account import Account
from .bus import Event
from .orders import LiveOrder
from .scaled import Terms, money_text, ratio_text

__all__ = ["FrameBuilder"]

if TYPE_CHECKING:
    Columns = tuple[array[int], array[int], array[int], array[int], array[int]]


class FrameBuilder:
    """Collects frame events from the bus and builds each frame."""

    def __init__(
        self,
        session_id: str,
        loaded: LoadedScenario,
        terms: Terms,
        cols: dict[str, Columns],
    ) -> None:
        self._session_id = session_id
        self._terms = terms
        self._cols = cols
        self._times = loaded.tape.times
        self._symbols = loaded.tape.symbols
        self._scenario = ScenarioRef.model_construct(
            id=loaded.scenario.id, root=loaded.scenario.root
        )
        self._pending: list[FrameEvent] = []
        self._marks_bar = -1
        self._marks: dict[str, str] = {}

    def on_event(self, event: Event) -> None:
        """Bus subscriber: the event as the next frame will show it."""
        members: dict[str, Any] = {"type": event.type, "bar": event.bar}
        if event.order is not None:
            members["order"] = event.order.id
        if event.qty is not None:
            members["qty"] = event.qty
        fill = event.fill
        if fill is not None:
            members["price"] = self._terms.price(fill.price)
            members["fee"] = money_text(fill.fee, self._terms.scale)
        if event.reason is not None:
            members["reason"] = event.reason
        self._pending.append(FrameEvent.model_construct(**members))

    def _marks_at(self, bar: int) -> dict[str, str]:
        if bar != self._marks_bar:
            price = self._terms.price
            self._marks = {s: price(self._cols[s][3][bar]) for s in self._symbols}
            self._marks_bar = bar
        return dict(self._marks)

    def build(
        self,
        *,
        seq: int,
        clock: int,
        last: int,
        status: Literal["open", "stood-down", "closed"],
        account: Account,
        peak: int,
        open_orders: list[LiveOrder],
    ) -> SessionFrame:
        terms = self._terms
        scale = terms.scale
        cols = self._cols
        equity = account.cash
        unrealized_total: Any = 0
        positions: list[Position] = []
        for symbol in self._symbols:
            held = account.holdings.get(symbol)
            if held is None:
                continue
            mark = cols[symbol][3][clock]
            value = held.qty * mark
            equity += value
            unrealized = value - held.basis
            unrealized_total += unrealized
            positions.append(
                Position.model_construct(
                    symbol=symbol,
                    qty=held.qty,
                    avg_price=terms.price_of(held.avg),
                    unrealized=money_text(unrealized, scale),
                )
            )
        drawdown = ratio_text(peak - equity, peak) if peak > 0 and equity < peak else "0.00000000"
        state = AccountState.model_construct(
            cash=money_text(account.cash, scale),
            equity=money_text(equity, scale),
            realized=money_text(account.realized, scale),
            unrealized=money_text(unrealized_total, scale),
            fees=money_text(account.fees, scale),
            peak=money_text(peak, scale),
            drawdown=drawdown,
        )
        orders = [
            FrameOrder.model_construct(
                id=o.id,
                alias=o.alias,
                side=o.side,
                qty=o.qty,
                filled=o.filled,
                symbol=o.symbol,
                type=o.type,
                limit=o.limit,
                stop=o.stop,
                tif=o.tif,
                status=o.status,
            )
            for o in open_orders
        ]
        events, self._pending = self._pending, []
        return SessionFrame.model_construct(
            kind="kestrel.frame",
            session=self._session_id,
            seq=seq,
            scenario=self._scenario,
            clock=Clock.model_construct(bar=clock, time=self._times[clock], remaining=last - clock),
            status=status,
            marks=self._marks_at(clock),
            account=state,
            positions=positions,
            orders=orders,
            events=events,
        )
