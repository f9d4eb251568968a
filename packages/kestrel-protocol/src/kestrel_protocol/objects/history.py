"""A session's history: the tape's bars up to and including the clock bar, never later."""

from __future__ import annotations

from typing import Literal

from ..model import DecimalStr, ProtocolModel, Volume
from .session import Clock, ScenarioRef

__all__ = ["History", "HistoryBar"]


class HistoryBar(ProtocolModel):
    """One row of the tape, exactly as its canonical CSV writes it."""

    time: str
    symbol: str
    open: DecimalStr
    high: DecimalStr
    low: DecimalStr
    close: DecimalStr
    volume: Volume


class History(ProtocolModel):
    """The last bars of a session's tape up to its clock (the history tool's result).

    ``bars`` is in tape order (time ascending, then symbol); its last time is
    ``clock.time``. Fewer bars than asked for means the tape has no earlier ones.
    """

    kind: Literal["kestrel.history"] = "kestrel.history"
    session: str
    scenario: ScenarioRef
    clock: Clock
    symbol: str | None
    """The one symbol asked for, or ``None`` for every symbol of the scenario."""
    bars: list[HistoryBar]
