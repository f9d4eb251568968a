"""The ``decimal`` contexts Kestrel computes in, whatever the caller's.

Kestrel runs inside its caller's process, and Python's ``decimal`` context is the
caller's: per thread, and set by them for their own arithmetic (a precision of 5, a
trap on ``Inexact``, ``ROUND_DOWN``). Every root must be the same whatever they set, so
no Kestrel computation reads that context. A ``Context(prec=50)`` alone is not enough
either: the members it leaves out (rounding, exponent limits, traps) are copied from
``decimal.DefaultContext``, which a caller may change too, so every context here names
them all.
"""

from __future__ import annotations

from decimal import (
    MAX_EMAX,
    MIN_EMIN,
    ROUND_HALF_EVEN,
    Context,
    DivisionByZero,
    InvalidOperation,
    Overflow,
)

__all__ = ["DEFAULT_DECIMAL_CONTEXT", "decimal_context"]


def decimal_context(prec: int = 28, *, wide: bool = False) -> Context:
    """A context of ``prec`` digits that is otherwise Python's default (half-even, exponents
    within ±999,999, traps on invalid operations, division by zero and overflow), or
    with exponents as wide as Decimal allows when ``wide``."""
    return Context(
        prec=prec,
        rounding=ROUND_HALF_EVEN,
        Emax=MAX_EMAX if wide else 999_999,
        Emin=MIN_EMIN if wide else -999_999,
        capitals=1,
        clamp=0,
        flags=[],
        traps=[InvalidOperation, DivisionByZero, Overflow],
    )


DEFAULT_DECIMAL_CONTEXT = decimal_context()
"""Python's default context (28 digits), pinned: where an operation Kestrel has always
done in the default context is now done, with the same results."""
