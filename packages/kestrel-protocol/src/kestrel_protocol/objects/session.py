"""Objects of a live session: pentads, frames, deliveries and submit responses."""

from __future__ import annotations

from typing import Literal, Self

from pydantic import Field, ValidationInfo, model_validator

from ..canonical import root_of
from ..model import (
    DecimalStr,
    ProtocolModel,
    Quantity,
    RootMismatchError,
    RootStr,
    SelfRooted,
    Volume,
    draft_context,
    is_draft,
)
from .news_item import NewsItem
from .offer import Offer

__all__ = [
    "AccountState",
    "Clock",
    "Delivery",
    "EventType",
    "FrameBar",
    "FrameEvent",
    "FrameOrder",
    "Payment",
    "Pentad",
    "PentadBody",
    "Position",
    "ScenarioRef",
    "SessionFrame",
    "SessionOpened",
    "SessionResponse",
    "SessionStatus",
    "StandDown",
]

Side = Literal["buy", "sell"]
OrderType = Literal["market", "limit", "stop", "stop-limit", "trailing-stop"]
Tif = Literal["day", "gtc", "ioc"]
OrderStatus = Literal[
    "held", "new", "partially_filled", "filled", "cancelled", "expired", "rejected"
]
"""``held``: a bracket's child waiting for its entry's first fill (docs/engine.md)."""
EventType = Literal[
    "accepted",
    "activated",
    "fill",
    "cancelled",
    "cancel-rejected",
    "expired",
    "rejected",
    "stood-down",
    "margin-call",
    "closed",
]
StandDownReason = Literal["statement", "max-drawdown", "end-of-tape"]
SessionStatus = Literal["open", "stood-down", "closed"]


class PentadBody(ProtocolModel):
    """The source exactly as sent."""

    media_type: Literal["text/x-kestrel"] = "text/x-kestrel"
    bytes: str


class Pentad(SelfRooted):
    """The five members that bind one accepted submission to the frame it applied to."""

    session: str
    seq: int = Field(ge=1)
    prev: RootStr
    body: PentadBody


class ScenarioRef(ProtocolModel):
    """A scenario by id and root."""

    id: str
    root: RootStr


class Clock(ProtocolModel):
    """The last processed bar, its time, and how many bars remain on the tape
    (``remaining``, absent from what is served of a sealed scenario: it tells the tape's
    length; a sealed session's frames are built without it, their roots too)."""

    bar: int
    time: str
    remaining: int | None = None


class FrameBar(ProtocolModel):
    """One symbol's clock bar: open, high, low, close (prices) and volume."""

    open: DecimalStr
    high: DecimalStr
    low: DecimalStr
    close: DecimalStr
    volume: Volume


class AccountState(ProtocolModel):
    """Money state at the clock bar's close."""

    cash: DecimalStr
    equity: DecimalStr
    realized: DecimalStr
    unrealized: DecimalStr
    fees: DecimalStr
    peak: DecimalStr
    drawdown: DecimalStr


class Position(ProtocolModel):
    """A non-flat position (negative ``qty`` is short)."""

    symbol: str
    qty: Quantity
    avg_price: DecimalStr
    unrealized: DecimalStr


class FrameOrder(ProtocolModel):
    """An open order as the frame shows it."""

    id: str
    alias: str | None
    side: Side
    qty: Quantity
    filled: Quantity
    symbol: str
    type: OrderType
    limit: DecimalStr | None
    stop: DecimalStr | None
    tif: Tif
    status: OrderStatus
    parent: str | None = None
    """A bracket child's entry (its id); absent on other orders."""
    group: str | None = None
    """The one-cancels-other group the order joined (``oco NAME``); absent otherwise."""
    trail: str | None = None
    """A trailing stop's offset as written (``"2.50"``, ``"5%"``); ``stop`` is the stop
    in force for the next bar. Absent on other orders."""
    target: str | None = None
    """A target order's target as written (``"50"``, ``"10%"``); absent otherwise."""


class FrameEvent(ProtocolModel):
    """Something that happened since the previous frame."""

    type: EventType
    order: str | None = None
    bar: int
    qty: Quantity | None = None
    price: DecimalStr | None = None
    fee: DecimalStr | None = None
    reason: str | None = None


class SessionFrame(ProtocolModel):
    """What an agent sees after every submission (bound by ``Delivery.frameRoot``)."""

    kind: Literal["kestrel.frame"] = "kestrel.frame"
    session: str
    seq: int
    scenario: ScenarioRef
    clock: Clock
    status: SessionStatus
    marks: dict[str, DecimalStr]
    bars: dict[str, FrameBar]
    """Each symbol's clock bar (its close is the mark)."""
    account: AccountState
    positions: list[Position]
    orders: list[FrameOrder]
    events: list[FrameEvent]
    news: list[NewsItem] | None = None
    """The newest news items visible at the clock (a scenario with news only)."""

    @property
    def tape_prefix(self) -> str | None:
        """A forward session's frame only: its ``tape`` member, the root of the tape's
        prefix up to the clock bar (what the session was shown), bound by the frame's
        root; ``None`` on every other session."""
        found = (self.model_extra or {}).get("tape")
        return found if isinstance(found, str) else None


class Delivery(ProtocolModel):
    """A frame and the root of its canonical JSON.

    ``frameRoot`` is verified like any ``root``: a delivery whose frame does not hash to
    it fails validation naming both values. Build one with :meth:`of`, which hashes the
    frame once (the runtime does this on every step). A sealed session's frame has no
    ``clock.remaining`` (the tape's length) and its root is of the frame as served; a
    session opened before its scenario was sealed is served without it under the whole
    frame's root, which the served part cannot be checked against: a delivery without
    ``clock.remaining`` is not checked.
    """

    frame: SessionFrame
    frame_root: RootStr

    @model_validator(mode="after")
    def _verify_frame_root(self, info: ValidationInfo) -> Self:
        if not is_draft(self, info) and self.frame.clock.remaining is not None:
            expected = root_of(self.frame.to_json())
            if self.frame_root != expected:
                raise RootMismatchError("kestrel.frame", expected, self.frame_root)
        return self

    @classmethod
    def of(cls, frame: SessionFrame) -> Self:
        """The delivery of ``frame``, its root computed."""
        root = root_of(frame.to_json())
        return cls.model_validate({"frame": frame, "frame_root": root}, context=draft_context(cls))


class StandDown(ProtocolModel):
    """Why a session stood down."""

    reason: StandDownReason
    detail: str


class SessionResponse(ProtocolModel):
    """The result of an accepted submit."""

    ok: bool = True
    disposition: Literal["applied", "stood-down"]
    pentad: Pentad
    delivery: Delivery
    stand_down: StandDown | None = None


class Payment(ProtocolModel):
    """A payment presented with a gated open: an offer and a voucher for it."""

    offer_id: str
    voucher: str


class SessionOpened(ProtocolModel):
    """``open`` as data: a session id, or the offer that gates it (continuation as data)."""

    gated: bool
    session_id: str | None = None
    payment: Offer | None = None
