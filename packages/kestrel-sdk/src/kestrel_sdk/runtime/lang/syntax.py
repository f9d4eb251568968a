"""The four statement kinds as parsed values (the lang work owns the parser).

INTERFACE (shared by the lang, engine and service work): the engine consumes these.
Prices and an order's quantity are ``Decimal`` exactly as written; symbols are
upper-cased; aliases lower-case.

Statements are read-only by type: every member is ``Final``, so the type checker refuses
an assignment (as it does :class:`..engine.bus.Event`'s), and a change is a new value
(``dataclasses.replace``); they hash and compare by value as frozen ones did. They are
not ``frozen=True``: a frozen dataclass's ``__init__`` sets each member through
``object.__setattr__``, which made an order's 15 members cost ≈ 2 µs of every new
source's check.
"""

from __future__ import annotations

from dataclasses import MISSING, dataclass, field, fields
from decimal import Decimal
from typing import Final

from kestrel_protocol.objects.session import OrderType, Side, Tif

__all__ = [
    "Advance",
    "Amount",
    "Cancel",
    "Located",
    "Order",
    "OrderType",
    "Side",
    "StandDownStatement",
    "Statement",
    "Tif",
    "WaitingAdvance",
]


@dataclass(slots=True, unsafe_hash=True)
class Amount:
    """A trailing offset or a target: ``value`` as written, a percent when ``percent``
    (``5%`` → ``Amount(Decimal("5"), True)``)."""

    value: Final[Decimal]
    percent: Final[bool]

    @property
    def text(self) -> str:
        """The amount as the frame and the blotter show it (``"2.50"``, ``"5%"``)."""
        return f"{self.value}%" if self.percent else str(self.value)


@dataclass(slots=True, unsafe_hash=True, repr=False)
class Order:
    """``buy 10 ACME ...`` (``qty``) or ``buy ACME to 50`` / ``to 10%`` (``target``,
    ``qty`` 0). The forms of docs/spec.md §3 beyond type/tif/alias are absent (``None``)
    on a plain order: ``trail`` (type ``trailing-stop``), ``take``/``loss``/``loss_trail``
    (a bracket's children), ``oco`` (a one-cancels-other group) and ``target``."""

    line: Final[int]
    side: Final[Side]
    qty: Final[Decimal]
    """Shares exactly as written (``37``, ``0.01``): whole or a decimal, never a float;
    the scenario's lot decides which are allowed (K203)."""
    symbol: Final[str]
    type: Final[OrderType]
    limit: Final[Decimal | None]
    stop: Final[Decimal | None]
    tif: Final[Tif]
    alias: Final[str | None]
    trail: Final[Amount | None] = None
    take: Final[Decimal | None] = None
    loss: Final[Decimal | None] = None
    oco: Final[str | None] = None
    target: Final[Amount | None] = None
    loss_trail: Final[Amount | None] = None
    """A bracket's trailing stop-loss (``loss trail 2.50``, ``loss trail 5%``)."""

    def __repr__(self) -> str:
        """The dataclass's text, the forms' parts only when given (a plain order reads as
        it always has)."""
        parts = ", ".join(
            f"{f.name}={getattr(self, f.name)!r}"
            for f in fields(self)
            if f.default is MISSING or getattr(self, f.name) is not None
        )
        return f"Order({parts})"

    @property
    def placed(self) -> int:
        """How many orders the statement places: the entry and its bracket's children."""
        loss = self.loss is not None or self.loss_trail is not None
        return 1 + (self.take is not None) + loss


@dataclass(slots=True, unsafe_hash=True)
class Cancel:
    """``cancel o3`` / ``cancel my-alias`` (``ref`` set) or ``cancel all [SYMBOL]``."""

    line: Final[int]
    ref: Final[str | None]
    all: Final[bool]
    symbol: Final[str | None]


@dataclass(slots=True, unsafe_hash=True)
class Advance:
    """``advance [N]`` (``count``) or ``advance to TIMESTAMP`` (``to``, normalised ISO Z)."""

    line: Final[int]
    count: Final[int | None]
    to: Final[str | None]


@dataclass(slots=True, unsafe_hash=True)
class WaitingAdvance(Advance):
    """An advance followed by ``wait DURATION`` (``wait_ms``): on a forward scenario,
    how long the submission may wait for a bar not yet published. Part of the source,
    ignored by the engine (a replay never waits)."""

    wait_ms: Final[int] = 0


@dataclass(slots=True, unsafe_hash=True)
class StandDownStatement:
    line: Final[int]
    reason: Final[str | None]


Statement = Order | Cancel | Advance | StandDownStatement


@dataclass(slots=True)
class Located:
    """A statement with the columns of its parts (``start``, ``qty``, ``symbol``,
    ``limit``, ``stop``, ``alias``, ``ref``, ``to``, ``count``). Read-only (``Final``, as
    the statements above): the lines of short sources are remembered, so
    many calls may return one ``Located``."""

    statement: Final[Statement]
    columns: Final[dict[str, int]] = field(default_factory=dict)
