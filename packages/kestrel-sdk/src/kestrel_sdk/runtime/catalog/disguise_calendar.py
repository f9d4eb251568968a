"""A disguise's calendar: the source's bars laid on days of the disguise's own.

Moved by whole weeks, a tape kept its source's gaps: a daily tape's missing weekdays are
its exchange's holidays, and searching the real first dates with the disguise's weekday
for the one whose holidays fall on them found GOOG's (2004-08-19); month-end bars kept
their months' lengths, which BTCUSD's give only from 2012-01-31. So the bars are laid on
a calendar of the disguise's own (:func:`open_day_calendar`):

- the source's UTC days with bars, in order, become days of the disguise: the first
  moves by the transform's whole weeks (between 2200 and 2400, its weekday kept), and
  each next comes the same number of *open days* after the one before: the number the
  source's days most often are apart (1 on a daily or intraday tape, 31 on month ends);
  an open day is a weekday the source has bars on at least half as often as on its
  busiest (GOOG's Monday to Friday, EURUSD's Sunday to Friday, every day for BTCUSD).
  Holidays are closed up, and no month length is kept;
- each bar keeps its time of day, so the bars of one UTC day stay on one day (a day
  order lives as long) and every interval within a day is kept; bar order is kept.

What changes is the time between bars across a closed gap (a holiday's day is gone):
margin interest, charged per second between bars, is charged on the disguise's.

A time between two bars (a news item's) keeps its place between them, at the same
fraction of their interval, rounded up to the second (so never at or before the earlier
bar: an item is visible at the same bars); where the interval is kept, that is its own
time moved as the bars are. A time before the first bar or after the last moves with it.

A disguise made before this (its reveal names no ``calendar``) moved every time by whole
weeks: :func:`week_calendar` lays its bars so, and its reveal still opens it. One made
now lays sessions, not UTC days, on open days by these rules (:mod:`.disguise_sessions`:
each bar's time of day, kept here, told the week of the year and the half days);
:func:`open_day_calendar` lays a disguise whose reveal names ``"open-days"``.
"""

from __future__ import annotations

from bisect import bisect_left
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from itertools import pairwise

__all__ = [
    "DisguiseCalendar",
    "open_day_calendar",
    "open_days_after",
    "open_step",
    "open_weekdays",
    "seconds_of",
    "week_calendar",
]

_FORMAT = "%Y-%m-%dT%H:%M:%SZ"
_ONE_DAY = timedelta(days=1)


def _parse(time: str) -> datetime:
    return datetime.strptime(time, _FORMAT).replace(tzinfo=UTC)


def seconds_of(time: str) -> int:
    """A bar time (``...Z``) in seconds since the epoch."""
    return int(_parse(time).timestamp())


def _text(seconds: int) -> str:
    return datetime.fromtimestamp(seconds, UTC).strftime(_FORMAT)


@dataclass(frozen=True, slots=True)
class DisguiseCalendar:
    """Where each of a source's bar times (seconds, ascending, distinct) is laid."""

    source: tuple[int, ...]
    moved: tuple[int, ...]

    def bar_times(self) -> list[str]:
        """The disguise's bar times, in the source's order."""
        return [_text(seconds) for seconds in self.moved]

    def time(self, time: str) -> str:
        """``time`` (a source's, ``...Z``) as the disguise shows it."""
        at = seconds_of(time)
        source, moved = self.source, self.moved
        index = bisect_left(source, at)
        if index < len(source) and source[index] == at:
            return _text(moved[index])
        if index == 0:
            return _text(moved[0] - (source[0] - at))
        if index == len(source):
            return _text(moved[-1] + (at - source[-1]))
        before, width = source[index - 1], source[index] - source[index - 1]
        span = moved[index] - moved[index - 1]
        return _text(moved[index - 1] - (-(at - before) * span // width))


def week_calendar(times: Sequence[str], weeks: int) -> DisguiseCalendar:
    """Every time moved by ``weeks`` whole weeks (a disguise made before open days)."""
    source = tuple(seconds_of(time) for time in times)
    shift = weeks * 7 * 86_400
    return DisguiseCalendar(source, tuple(seconds + shift for seconds in source))


def open_weekdays(days: Sequence[date]) -> frozenset[int]:
    """The weekdays ``days`` fall on at least half as often as on the busiest one."""
    counts = Counter(day.weekday() for day in days)
    busiest = max(counts.values())
    return frozenset(weekday for weekday, count in counts.items() if 2 * count >= busiest)


def _open_days_apart(first: date, last: date, open_weekdays: frozenset[int]) -> int:
    """How many open days after ``first`` ``last`` is (itself counted if open)."""
    return sum(
        (first + timedelta(days=offset)).weekday() in open_weekdays
        for offset in range(1, (last - first).days + 1)
    )


def open_step(days: Sequence[date], open_weekdays: frozenset[int]) -> int:
    """How many open days apart ``days`` (ascending, distinct) most often are (1 if
    they are fewer than two; a tie goes to the fewer)."""
    apart = Counter(_open_days_apart(a, b, open_weekdays) for a, b in pairwise(days))
    return min(apart, key=lambda count: (-apart[count], count)) if apart else 1


def open_days_after(day: date, count: int, open_weekdays: frozenset[int]) -> date:
    """The day ``count`` open days after ``day``."""
    while count:
        day += _ONE_DAY
        count -= day.weekday() in open_weekdays
    return day


def open_day_calendar(times: Sequence[str], weeks: int) -> DisguiseCalendar:
    """The source's bar ``times`` laid on open days, the first day moved by ``weeks``."""
    stamps = [_parse(time) for time in times]
    days = sorted({stamp.date() for stamp in stamps})
    weekdays = open_weekdays(days)
    step = open_step(days, weekdays)
    laid = {days[0]: days[0] + timedelta(weeks=weeks)}
    day = laid[days[0]]
    for source_day in days[1:]:
        day = open_days_after(day, step, weekdays)
        laid[source_day] = day
    source = tuple(int(stamp.timestamp()) for stamp in stamps)
    moved = tuple(
        int((stamp + (laid[stamp.date()] - stamp.date())).timestamp()) for stamp in stamps
    )
    return DisguiseCalendar(source, moved)
