"""The four statement kinds as parsed values (the lang work owns the parser).

INTERFACE (shared by the lang, engine and service work): the engine consumes these.
Prices are ``Decimal`` exactly as written; symbols are upper-cased; aliases lower-case.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from kestrel_protocol.objects.session import OrderType, Side, Tif

__all__ = [
    "Advance",
    "Cancel",
    "Order",
    "OrderType",
    "Side",
    "StandDownStatement",
    "Statement",
    "Tif",
    "WaitingAdvance",
]


@dataclass(frozen=True, slots=True)
class Order:
    line: int
    side: Side
    qty: int
    symbol: str
    type: OrderType
    limit: Decimal | None
    stop: Decimal | None
    tif: Tif
    alias: str | None


@dataclass(frozen=True, slots=True)
class Cancel:
    """``cancel o3`` / ``cancel my-alias`` (``ref`` set) or ``cancel all [SYMBOL]``."""

    line: int
    ref: str | None
    all: bool
    symbol: str | None


@dataclass(frozen=True, slots=True)
class Advance:
    """``advance [N]`` (``count``) or ``advance to TIMESTAMP`` (``to``, normalised ISO Z)."""

    line: int
    count: int | None
    to: str | None


@dataclass(frozen=True, slots=True)
class WaitingAdvance(Advance):
    """An advance followed by ``wait DURATION`` (``wait_ms``): on a forward scenario,
    how long the submission may wait for a bar not yet published. Part of the source,
    ignored by the engine (a replay never waits)."""

    wait_ms: int = 0


@dataclass(frozen=True, slots=True)
class StandDownStatement:
    line: int
    reason: str | None


Statement = Order | Cancel | Advance | StandDownStatement
