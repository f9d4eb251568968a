"""Frames (spec §6 SessionFrame) built from engine state and the bus's events.

Frames are built with ``model_construct``: every member is produced here from exact
integers and already has its wire form, so re-validating each step would only cost time.
The scenario reference and the last bar's marks are cached.
"""

from __future__ import annotations

import hashlib
import json
from array import array
from fractions import Fraction
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from kestrel_protocol import (
    AccountState,
    Clock,
    FrameEvent,
    FrameOrder,
    Position,
    ScenarioRef,
    SessionFrame,
)
from pydantic import BaseModel

from ..catalog.model import LoadedScenario
from .account import Account
from .bus import Event
from .orders import LiveOrder
from .scaled import Terms, money_text, ratio_text

__all__ = ["FrameBuilder", "construct", "frame_root"]

_ENCODE = json.JSONEncoder(
    ensure_ascii=False, sort_keys=True, separators=(",", ":"), allow_nan=False
).encode


def frame_root(frame: SessionFrame) -> str:
    """``root_of(frame)`` for an engine-built frame, via the C JSON encoder.

    An engine frame holds only ASCII keys, strings, integers, ``None``, lists and
    objects, for which sorted-key compact JSON without ASCII escaping *is* RFC 8785
    (a test checks it against ``kestrel_protocol.root_of``). Grading hashes one frame
    per replayed submission, so this is on its hot path.
    """
    data = frame.model_dump(mode="json", by_alias=True, exclude_unset=True)
    return "sha256:" + hashlib.sha256(_ENCODE(data).encode("utf-8")).hexdigest()


M = TypeVar("M", bound=BaseModel)

_EVENT_DEFAULTS = {"order": None, "qty": None, "price": None, "fee": None, "reason": None}


def construct(cls: type[M], members: dict[str, Any], given: set[str] | None = None) -> M:
    """``cls.model_construct(**members)`` without its per-field bookkeeping.

    ``members`` must hold every field by its Python name (values already in wire form);
    ``given`` names those that are dumped (default: all). A frame is rebuilt on every
    step, and pydantic's generic ``model_construct`` was most of a step's cost.
    """
    obj = cls.__new__(cls)
    object.__setattr__(obj, "__dict__", members)
    object.__setattr__(obj, "__pydantic_fields_set__", set(members) if given is None else given)
    object.__setattr__(obj, "__pydantic_extra__", {})
    object.__setattr__(obj, "__pydantic_private__", None)
    return obj


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
        self._scenario = construct(
            ScenarioRef, {"id": loaded.scenario.id, "root": loaded.scenario.root}
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
        given = set(members)
        self._pending.append(construct(FrameEvent, {**_EVENT_DEFAULTS, **members}, given))

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
        unrealized_total: Fraction | int = 0
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
                construct(
                    Position,
                    {
                        "symbol": symbol,
                        "qty": held.qty,
                        "avg_price": terms.price_of(held.avg),
                        "unrealized": money_text(unrealized, scale),
                    },
                )
            )
        drawdown = ratio_text(peak - equity, peak) if peak > 0 and equity < peak else "0.00000000"
        state = construct(
            AccountState,
            {
                "cash": money_text(account.cash, scale),
                "equity": money_text(equity, scale),
                "realized": money_text(account.realized, scale),
                "unrealized": money_text(unrealized_total, scale),
                "fees": money_text(account.fees, scale),
                "peak": money_text(peak, scale),
                "drawdown": drawdown,
            },
        )
        orders = [
            construct(
                FrameOrder,
                {
                    "id": o.id,
                    "alias": o.alias,
                    "side": o.side,
                    "qty": o.qty,
                    "filled": o.filled,
                    "symbol": o.symbol,
                    "type": o.type,
                    "limit": o.limit,
                    "stop": o.stop,
                    "tif": o.tif,
                    "status": o.status,
                },
            )
            for o in open_orders
        ]
        events, self._pending = self._pending, []
        return construct(
            SessionFrame,
            {
                "kind": "kestrel.frame",
                "session": self._session_id,
                "seq": seq,
                "scenario": self._scenario,
                "clock": construct(
                    Clock, {"bar": clock, "time": self._times[clock], "remaining": last - clock}
                ),
                "status": status,
                "marks": self._marks_at(clock),
                "account": state,
                "positions": positions,
                "orders": orders,
                "events": events,
            },
        )
