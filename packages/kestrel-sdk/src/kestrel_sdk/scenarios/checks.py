"""Checking one imported row: its time, its prices and its volume, every fault named.

Times: ISO-8601 with or without a zone (none means UTC, and the import notes it: see
:func:`naive_note`), a date alone, or epoch
seconds / milliseconds / microseconds / nanoseconds (told apart by magnitude). A row keeps
its UTC time in epoch seconds and the calendar day its own time names (the local date of
a time with an offset, so ``2024-03-11 00:00:00-04:00`` is 2024-03-11): a daily tape
dates each bar by that day.
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, time, timedelta
from decimal import Decimal, InvalidOperation
from typing import NamedTuple

from kestrel_protocol.quoting import counted

from .layouts import RawBar
from .volumes import import_volume

__all__ = ["EPOCH_DAY", "CheckedRow", "check_row", "naive_note", "time_text"]

EPOCH_DAY = date(1970, 1, 1).toordinal()
"""The day ordinal of 1970-01-01 (a day's ordinal less this, times 86,400, is its epoch time)."""

_EPOCH = re.compile(r"-?[0-9]+")
_EPOCH_LONGEST = 24  # characters of an epoch time: year 9999 in nanoseconds has 21 digits
_FRACTION = re.compile(r":[0-9]{2}[.,]([0-9]+)")  # Python keeps only 6 digits of it
_ZERO = Decimal(0)
_PRICE_LIMIT = Decimal(10**12)  # the tape's prices have at most 12 integer digits
_UTC_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_SECOND = timedelta(seconds=1)
_NAIVE_EPOCH = datetime(1970, 1, 1)  # formats UTC times without an offset
_DATE_LONGEST = 10  # characters of an ISO date alone (2024-03-01); a time of day is longer


class CheckedRow(NamedTuple):
    """A row that passed every check of its own."""

    seconds: int  # its UTC time, in seconds since the epoch
    day: int  # the ordinal of the calendar day its own time names
    midnight: bool  # its own time is 00:00:00 (a date, in whatever zone)
    prices: tuple[Decimal, Decimal, Decimal, Decimal]  # open, high, low, close
    volume: str  # its canonical text, as the tape writes it (``volumes.py``)
    noisy: str  # the file's text when a double's noise was rounded off the volume, else ""
    naive: bool  # an ISO time of day without an offset, taken as UTC


def time_text(seconds: int) -> str:
    """A tape time (``2024-03-01T15:30:00Z``) of seconds since the epoch."""
    return (_NAIVE_EPOCH + timedelta(seconds=seconds)).isoformat() + "Z"


def naive_note(first: tuple[int, str, int], count: int) -> str:
    """The note for ``count`` times of day without an offset, taken as UTC, the ``first`` of
    them ``(row, text in the file, its UTC time in epoch seconds)``."""
    row, text, seconds = first
    return (
        f"{counted(count, 'time')} without an offset taken as UTC: "
        f"{text} (row {row}) is {time_text(seconds)}"
        " (give local times their offset, e.g. 2024-03-01T09:30:00-05:00)"
    )


def _parse_time(text: str) -> tuple[datetime, date, bool, bool] | str:
    """(UTC time, its calendar day, at midnight, a time of day without an offset) or the
    reason it is not a time."""
    if not text:
        return "the time is empty"
    if _EPOCH.fullmatch(text):
        if len(text) > _EPOCH_LONGEST:  # past any date: not read (int() refuses 4301 digits)
            return f"time {text} is out of range"
        value = int(text)
        divisor = next(
            (
                d
                for limit, d in ((10**11, 1), (10**14, 10**3), (10**17, 10**6))
                if abs(value) < limit
            ),
            10**9,
        )
        seconds, rest = divmod(value, divisor)
        try:
            stamp = _UTC_EPOCH + timedelta(seconds=seconds)
        except OverflowError:
            return f"time {text} is out of range"
        if rest:
            return f"time {text} has fractions of a second"
        return stamp, stamp.date(), stamp.time() == time(), False
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        return f"time {text!r} is not a date or an ISO-8601 time like 2024-03-01T15:30:00Z"
    fraction = _FRACTION.search(text)
    if parsed.microsecond or (fraction and fraction.group(1).strip("0")):
        return f"time {text} has fractions of a second"
    if parsed.tzinfo is not None:
        return parsed.astimezone(UTC), parsed.date(), parsed.time() == time(), False
    naive = len(text) > _DATE_LONGEST  # a date alone names a day, in any zone
    return parsed.replace(tzinfo=UTC), parsed.date(), parsed.time() == time(), naive


def _decimal(name: str, text: str) -> Decimal | str:
    if not text:
        return f"{name} is empty"
    try:
        value = Decimal(text)
    except InvalidOperation:
        return f"{name} {text!r} is not a number"
    if value.is_infinite():
        return f"{name} {text!r} is infinite"
    if not value.is_finite():
        return f"{name} {text!r} is not a number"
    return value


def check_row(raw: RawBar) -> CheckedRow | list[str]:
    """The row, checked, or every fault found in it."""
    faults: list[str] = []
    when = _parse_time(raw.time)
    if isinstance(when, str):
        faults.append(when)
    prices: list[Decimal] = []
    for name, text in (
        ("Open", raw.open),
        ("High", raw.high),
        ("Low", raw.low),
        ("Close", raw.close),
    ):
        value = _decimal(name, text)
        if isinstance(value, str):
            faults.append(value)
        elif value <= _ZERO:
            faults.append(f"{name} {text} must be greater than 0")
        elif value >= _PRICE_LIMIT:
            faults.append(f"{name} {text} is too large")
        else:
            prices.append(value)
    value = _decimal("Volume", raw.volume)
    volume = value if isinstance(value, str) else import_volume(value, raw.volume)
    if isinstance(volume, str):
        faults.append(volume)
    if len(prices) == 4:
        open_, high, low, close = prices
        if high < low:
            faults.append(f"High {raw.high} < Low {raw.low}")
        else:
            if not low <= open_ <= high:
                faults.append(f"Open {raw.open} is outside Low {raw.low} .. High {raw.high}")
            if not low <= close <= high:
                faults.append(f"Close {raw.close} is outside Low {raw.low} .. High {raw.high}")
    if faults or isinstance(when, str) or isinstance(volume, str):
        return faults
    stamp, day, midnight, naive = when
    seconds = (stamp - _UTC_EPOCH) // _SECOND
    four = (prices[0], prices[1], prices[2], prices[3])
    kept, rounded = volume
    noisy = raw.volume if rounded else ""
    return CheckedRow(seconds, day.toordinal(), midnight, four, kept, noisy, naive)
