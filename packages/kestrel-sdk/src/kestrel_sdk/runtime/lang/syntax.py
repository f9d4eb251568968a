"""The four statement kinds as parsed values (the lang work owns the parser).

INTERFACE (shared by the lang, engine and service work): the engine consumes these.
Prices and an order's quantity are ``Decimal`` exactly as written; symbols are
upper-cased; aliases lower-case.
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
]


@dataclass(frozen=True, slots=True)
class Order:
    line: int
    side: Side
    qty: Decimal
    """Shares exactly as written (``37``, ``0.01``): whole or a decimal, never a float;
    the scenario's lot decides which are allowed (K203)."""
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
class StandDownStatement:
    line: int
    reason: str | None


Statement = Order | Cancel | Advance | StandDownStatement
