"""A frame's money and prices as the gym computes with them: exact integers.

A frame shows money to the cent and prices at their tape's places, as decimal strings
(docs/spec.md §2). The gym reads them as integers (cents; a price's units over a power
of ten) and computes its numbers from those exactly: a float it hands back is an integer
quotient, which Python rounds correctly (``int / int``), so it is ``float(Decimal(...))``
of the exact decimal, bit for bit, without a ``Decimal`` made on the step.
"""

from __future__ import annotations

__all__ = ["cents", "price_units"]


def cents(text: str) -> int:
    """Money as whole cents (``"-12.30"`` is ``-1230``, ``"7"`` is ``700``); money finer
    than the cent is refused (``ValueError`` naming it): the protocol has none."""
    if text[-3:-2] == ".":  # as every frame writes money: two places
        return int(text.replace(".", "", 1))
    whole, _, fraction = text.partition(".")
    if len(fraction) > 2:
        raise ValueError(f"money is to the cent, not {text!r}")
    return int(whole + fraction.ljust(2, "0"))


def price_units(text: str) -> tuple[int, int]:
    """A price as ``(units, unit)``, exactly ``units / unit`` (``unit`` a power of ten:
    ``"101.25"`` is ``(10125, 100)``)."""
    point = text.find(".")
    if point < 0:
        return int(text), 1
    return int(text.replace(".", "", 1)), 10 ** (len(text) - point - 1)
