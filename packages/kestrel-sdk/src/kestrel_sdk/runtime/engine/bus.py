"""The session's event bus: every state change is published once, as an :class:`Event`.

The frame's ``events`` list and the blotter are both built by subscribers, so they can
never disagree about what happened.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final, final

from kestrel_protocol.objects.session import EventType

from .orders import Fill, LiveOrder

__all__ = ["Event", "EventBus"]


@final
class Event:
    """What happened, at which bar; amounts in P units. Immutable (``Final`` members).

    ``reason``: ``rejected`` → the rejection (``insufficient-cash``, ``not-shortable``,
    ``max-position``); ``cancelled`` → who cancelled (``statement``, ``stand-down``,
    ``closed``); ``cancel-rejected`` (a ``cancel`` of an order no longer open) → the
    order's status (``filled``, ``cancelled``, ``expired``, ``rejected``); ``expired`` →
    the time in force (``ioc``, ``day``); ``stood-down`` → ``statement``,
    ``max-drawdown`` or ``end-of-tape``; ``accepted`` of a liquidation order →
    ``stand-down``.
    """

    __slots__ = ("bar", "fill", "order", "qty", "reason", "type")

    # A plain class, not a frozen dataclass: several are made per step, and a compiled
    # build runs a dataclass's generated __init__ (object.__setattr__ per member) as
    # interpreted Python.
    def __init__(
        self,
        type: EventType,
        bar: int,
        order: LiveOrder | None = None,
        qty: int | None = None,
        fill: Fill | None = None,
        *,
        reason: str | None = None,
    ) -> None:
        self.type: Final = type
        self.bar: Final = bar
        self.order: Final = order
        self.qty: Final = qty
        self.fill: Final = fill
        self.reason: Final = reason


class EventBus:
    """Synchronous publish/subscribe in subscription order (deterministic)."""

    __slots__ = ("_subscribers",)

    def __init__(self) -> None:
        self._subscribers: list[Callable[[Event], None]] = []

    def subscribe(self, subscriber: Callable[[Event], None]) -> None:
        self._subscribers.append(subscriber)

    def publish(self, event: Event) -> None:
        for subscriber in self._subscribers:
            subscriber(event)
