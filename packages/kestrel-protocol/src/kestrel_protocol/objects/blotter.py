"""The blotter: every order and fill of a session, bound by a root."""

from __future__ import annotations

from typing import Literal

from ..model import DecimalStr, ProtocolModel, Quantity, SelfRooted
from .session import OrderStatus, OrderType, Side, Tif

__all__ = ["Blotter", "BlotterFill", "BlotterOrder"]


class BlotterOrder(ProtocolModel):
    """An order over its whole life; ``seq``/``line`` locate the statement (0 for automatic)."""

    id: str
    alias: str | None
    seq: int
    line: int
    side: Side
    qty: Quantity
    symbol: str
    type: OrderType
    limit: DecimalStr | None
    stop: DecimalStr | None
    tif: Tif
    status: OrderStatus
    filled: Quantity
    avg_price: DecimalStr | None
    submitted_bar: int
    closed_bar: int | None
    reason: str | None
    parent: str | None = None
    """A bracket child's entry; absent on other orders (see :class:`.session.FrameOrder`)."""
    group: str | None = None
    trail: str | None = None
    target: str | None = None


class BlotterFill(ProtocolModel):
    """One execution."""

    id: str
    order: str
    bar: int
    time: str
    qty: Quantity
    price: DecimalStr
    fee: DecimalStr


class Blotter(SelfRooted):
    """All orders (open and closed) and all fills of a session."""

    kind: Literal["kestrel.blotter"] = "kestrel.blotter"
    session: str
    orders: list[BlotterOrder]
    fills: list[BlotterFill]
