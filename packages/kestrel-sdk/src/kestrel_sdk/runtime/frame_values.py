"""A frame's plain values: what a training loop reads of a step, without its objects.

A gym step reads the clock, the account's cash and equity, the positions, the marks and
the events' types; it asks for no protocol object and no root. :class:`FrameValues`
holds exactly those, as the frame shows them (money and prices as their decimal text,
quantities as the frame's members): the engine gives them from its own state
(:meth:`.engine.step.Step.values`), any frame object gives the same (:meth:`of`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from kestrel_protocol import SessionFrame

__all__ = ["FrameValues"]


@dataclass(slots=True)
class FrameValues:
    """The values of one frame a training loop reads (see the module docstring).

    Read-only by type (``Final`` members, as the statements of :mod:`..lang.syntax`),
    equal when every member is, not hashable (its dicts are not). Not ``frozen=True``:
    one is made on every gym step, and a frozen dataclass's ``__init__`` sets each member
    through ``object.__setattr__`` (≈ 1.5 µs of nine members against ≈ 0.5). Made with
    its members in order, not by keyword (≈ 0.22 µs against 0.47: the two makers, the
    engine's and :meth:`of`, are checked equal member by member by the tests)."""

    session: Final[str]
    bar: Final[int]
    time: Final[str]
    status: Final[str]
    cash: Final[str]
    equity: Final[str]
    positions: Final[dict[str, int | str]]
    """Each non-flat position's quantity, by symbol."""
    marks: Final[dict[str, str]]
    events: Final[tuple[str, ...]]
    """The types of the frame's events, in order."""

    @classmethod
    def of(cls, frame: SessionFrame) -> FrameValues:
        """The values of ``frame``."""
        account = frame.account
        return cls(  # session, bar, time, status, cash, equity, positions, marks, events
            frame.session,
            frame.clock.bar,
            frame.clock.time,
            frame.status,
            account.cash,
            account.equity,
            {item.symbol: item.qty for item in frame.positions},
            dict(frame.marks),
            tuple(event.type for event in frame.events),
        )
