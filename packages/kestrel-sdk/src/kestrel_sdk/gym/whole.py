"""The gym trades whole lots: a quantity or lot as an integer, or a clear refusal."""

from __future__ import annotations

__all__ = ["whole_quantity"]


def whole_quantity(value: int | str) -> int:
    """A quantity or lot of a gym instrument as an integer. The protocol carries a
    scenario's quantities as decimal strings when one of its lots is fractional
    (``"0.01"``): the gym's spaces are whole lots, so such a scenario is refused."""
    if isinstance(value, str):
        raise ValueError(f"the gym trades whole lots; this scenario's quantity is {value}")
    return value
