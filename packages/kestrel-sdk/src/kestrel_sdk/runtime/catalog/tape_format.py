"""What a tape is made of: its header, its times and prices, and what a check of one says.

Shared by the two readers of a tape (``tape_columns``: canonical text, column-wise;
``tape_rows``: any text, a row at a time), so both apply one set of rules.
"""

from __future__ import annotations

import re
from array import array
from bisect import bisect_left
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date

__all__ = [
    "FIELDS",
    "HEADER",
    "MAX_PRICE_DIGITS",
    "TIME",
    "TIME_FORM",
    "TapeProblem",
    "TapeShape",
    "day_ordinals",
    "decimal_units",
    "tick_units",
    "unit_text",
]

HEADER = "time,symbol,open,high,low,close,volume"
FIELDS = 7
TIME_FORM = r"[0-9]{4}-[0-9]{2}-[0-9]{2}T(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]Z"
"""A time as a tape writes it: ISO-8601 UTC to the second (its date checked apart)."""
TIME = re.compile(TIME_FORM)
MAX_PRICE_DIGITS = 15  # keeps every scaled price far inside int64 and the JSON safe range


@dataclass(frozen=True, slots=True)
class TapeProblem:
    """One fault in a tape file (``line`` is the 1-based CSV line, ``None`` when global)."""

    line: int | None
    reason: str


@dataclass(frozen=True, slots=True)
class TapeShape:
    """What the catalog needs about a canonical tape without parsing its columns."""

    bars: int
    start: str
    end: str
    root: str


def decimal_units(text: str, scale: int) -> int:
    """A non-negative decimal of at most ``scale`` places (trailing zeros aside) as an
    integer in units of ``10**-scale``: what :func:`unit_text` writes, read back."""
    whole, _, frac = text.partition(".")
    frac = frac.rstrip("0")
    return int(whole + frac.ljust(scale, "0")) if scale else int(whole)


def tick_units(ticks: Mapping[str, str], scale: int) -> dict[str, int]:
    """Each tick in units of ``10**-scale`` (the grid a scaled price must divide by)."""
    return {symbol: decimal_units(tick, scale) for symbol, tick in ticks.items()}


def day_ordinals(times: Sequence[str]) -> array[int] | None:
    """The day ordinal of each of ``times`` (in ``TIME``'s form, ascending), or ``None`` if
    a date is impossible (the form already rules out an impossible time of day)."""
    found = array("q")
    start = 0
    while start < len(times):
        day = times[start][:10]
        end = bisect_left(times, day + "U", start)  # "T" < "U": past the day's last time
        try:
            ordinal = date.fromisoformat(day).toordinal()
        except ValueError:
            return None
        found += array("q", [ordinal]) * (end - start)
        start = end
    return found


def unit_text(value: int, scale: int) -> str:
    """A non-negative scaled integer as a decimal with ``scale`` places."""
    whole, frac = divmod(value, 10**scale)
    return f"{whole}.{frac:0{scale}d}" if scale else str(whole)
