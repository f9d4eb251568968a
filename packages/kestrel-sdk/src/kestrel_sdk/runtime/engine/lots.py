"""Quantities in lots: exact integers of the scenario's finest lot place.

An instrument's ``lot`` is whole (``1``, ``10``: every scenario before fractional lots)
or a decimal (``"0.01"`` of a bitcoin). A session counts every quantity (an order's,
a fill's, a position's) as an integer of *quantity units* of ``10**-Q``, where ``Q`` is
the most decimal places of any lot of its scenario (0 when every lot is whole, so a
quantity unit is then one share, as always). Money is counted in units of
``10**-(P + Q)`` (``P``: the price scale of :mod:`.scaled`), so a quantity times a price
is money exactly, with no division: ``0.01 × 43210.50`` is ``1 × 4321050`` units of
``10**-4``.

Quantities are shown as they were before fractional lots on a scenario whose lots are
whole (integers), and as exact decimal strings without trailing zeros on one with a
fractional lot (``"0.01"``, ``"1"``): never a float.
"""

from __future__ import annotations

from collections.abc import Iterable
from decimal import Decimal

from kestrel_protocol import DEFAULT_DECIMAL_CONTEXT

__all__ = ["lot_places", "quantity_json", "quantity_member", "quantity_units"]


def lot_places(lots: Iterable[int | str]) -> int:
    """``Q``: the most decimal places of the lots (0 when all are whole)."""
    found = 0
    for lot in lots:
        if isinstance(lot, str) and "." in lot:
            found = max(found, len(lot.split(".", 1)[1]))
    return found


def quantity_units(value: Decimal | int | str, places: int) -> int:
    """``value`` (shares, a decimal) in units of ``10**-places``; ``ValueError`` when it
    is finer than that (the lot check refuses such a quantity before it gets here)."""
    scaled = value if isinstance(value, Decimal) else Decimal(value)
    if places:  # (a whole lot's quantity is its shares: no scaling)
        scaled = scaled.scaleb(places, DEFAULT_DECIMAL_CONTEXT)
    whole, den = scaled.as_integer_ratio()
    if den != 1:
        raise ValueError(f"quantity {value} is finer than 1e-{places}")
    return whole


def quantity_member(units: int, places: int) -> int | str:
    """A quantity as protocol objects carry it: the integer itself when ``places`` is 0,
    else its exact decimal text without trailing zeros (``1`` unit of 1e-2 → ``"0.01"``)."""
    if not places:
        return units
    sign = "-" if units < 0 else ""
    whole, frac = divmod(abs(units), 10**places)
    digits = str(frac).zfill(places).rstrip("0")
    return f"{sign}{whole}.{digits}" if digits else f"{sign}{whole}"


def quantity_json(units: int, places: int) -> str:
    """:func:`quantity_member` as JSON text (an integer, or a quoted decimal)."""
    if not places:
        return str(units)
    return f'"{quantity_member(units, places)}"'
