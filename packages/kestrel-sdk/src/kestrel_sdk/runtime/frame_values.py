"""A frame's plain values: what a training loop reads of a step, without its objects.

A gym step reads the clock, the account's cash and equity, the positions, the marks and
the events' types; it asks for no protocol object and no root. :class:`FrameValues`
holds exactly those, as the frame shows them (money and prices as their decimal text,
quantities as the frame's members): the engine gives them from its own state
(:meth:`.engine.step.Step.values`), any frame object gives the same (:meth:`of`).
"""

from __future__ import annotations

from typing import Any, Final, final

from kestrel_protocol import SessionFrame

__all__ = ["FrameValues"]

_MEMBERS: Final = (
    "session",
    "bar",
    "time",
    "status",
    "cash",
    "equity",
    "positions",
    "marks",
    "events",
)


@final
class FrameValues:
    """The values of one frame a training loop reads (see the module docstring).

    Immutable by type (``Final`` members, as :class:`.engine.bus.Event`), equal when every
    member is. A plain class, not a frozen dataclass: one is made on every gym step, and
    a frozen dataclass's ``__init__`` sets each member through ``object.__setattr__``
    (≈ 1 µs of nine members against ≈ 0.3)."""

    __slots__ = _MEMBERS

    def __init__(
        self,
        *,
        session: str,
        bar: int,
        time: str,
        status: str,
        cash: str,
        equity: str,
        positions: dict[str, int | str],
        marks: dict[str, str],
        events: tuple[str, ...],
    ) -> None:
        self.session: Final = session
        self.bar: Final = bar
        self.time: Final = time
        self.status: Final = status
        self.cash: Final = cash
        self.equity: Final = equity
        self.positions: Final = positions
        """Each non-flat position's quantity, by symbol."""
        self.marks: Final = marks
        self.events: Final = events
        """The types of the frame's events, in order."""

    def _members(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in _MEMBERS)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, FrameValues):
            return NotImplemented
        return self._members() == other._members()

    __hash__ = None  # type: ignore[assignment] # its dicts are not hashable

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in _MEMBERS)
        return f"FrameValues({shown})"

    @classmethod
    def of(cls, frame: SessionFrame) -> FrameValues:
        """The values of ``frame``."""
        return cls(
            session=frame.session,
            bar=frame.clock.bar,
            time=frame.clock.time,
            status=frame.status,
            cash=frame.account.cash,
            equity=frame.account.equity,
            positions={item.symbol: item.qty for item in frame.positions},
            marks=dict(frame.marks),
            events=tuple(event.type for event in frame.events),
        )
