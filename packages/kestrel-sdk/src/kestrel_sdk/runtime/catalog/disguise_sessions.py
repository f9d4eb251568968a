"""A disguise's sessions: the source's bars laid on a session template of the disguise's own.

Laid on open days (:func:`.disguise_calendar.open_day_calendar`), a tape's bars kept their
times of day and their UTC days, and that dated it three ways: an FX tape's weekly
reopening moved by an hour when US summer time ended (EURUSD: Sunday 21:00 to 22:00 UTC,
and its weekend 48 or 50 hours instead of 49 on the two weekends it changed), which tells
the week of the year; an exchange's half days ended early; and a weekday moved on by one
at each closed holiday, so a tape whose days differ by weekday (EURUSD's short Sunday and
Friday) showed where one was closed (after EURUSD's Christmas, 12 gaps of 25 hours). So
:func:`session_calendar` lays *sessions*, not days:

- a session is a run of bars none more than 12 hours after the one before (a bar on a new
  UTC day after a longer gap opens the next): a trading day of an exchange, a week of an
  FX tape, every bar of a daily tape, the whole of a tape that never closes;
- the sessions' first days are laid on open days as :func:`~.disguise_calendar.open_day_calendar`
  lays days (the first moved by the transform's whole weeks, each next the usual number
  of open days after the one before; open days being the weekdays sessions open on);
- the template is the first session of the usual number of bars: its time of day and
  each bar's offset from its first. A session of that many bars is laid at the template's
  time of day, on the template's offsets, whatever the source's clock did (summer time,
  a late open); a shorter one (a half day, a holiday's week) is spread over the template,
  its first bar at the template's first and its last at the template's last, each bar on
  the template's nearest offset (its bars then cover longer intervals: margin interest and
  borrow, charged per second between bars, are charged on the disguise's). The tape's
  last session (cut by the tape's end) and a longer one keep their own offsets from the
  template's time of day; the tape's first session, when short (cut by the tape's start),
  keeps its own times before the second session's first bar;
- bar order, and which bars share a session, are kept; a session never starts before the
  one before it ends (else it is laid an open day later).

What it cannot hide: a short session keeps its number of bars (fewer than the template's,
spread wider), so a half day or a holiday's week is still told by its count; no layout
hides it while the number of bars and the sessions they belong to are kept.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from datetime import UTC, date, datetime, timedelta
from itertools import pairwise

from .disguise_calendar import (
    DisguiseCalendar,
    open_days_after,
    open_step,
    open_weekdays,
    seconds_of,
)

__all__ = ["SESSIONS", "session_calendar"]

SESSIONS = "sessions"
"""The name a reveal gives this calendar (``"calendar": "sessions"``)."""

_BREAK = 12 * 3600  # a longer gap between bars on two UTC days ends a session
_DAY = 86_400


def _day(seconds: int) -> date:
    return datetime.fromtimestamp(seconds, UTC).date()


def _midnight(day: date) -> int:
    return int(datetime(day.year, day.month, day.day, tzinfo=UTC).timestamp())


def _sessions(source: Sequence[int]) -> list[tuple[int, ...]]:
    """Bar times (seconds, ascending) split into sessions."""
    runs: list[list[int]] = [[source[0]]]
    for before, at in pairwise(source):
        if at - before > _BREAK and _day(at) != _day(runs[-1][0]):
            runs.append([at])
        else:
            runs[-1].append(at)
    return [tuple(run) for run in runs]


def _laid(
    session: tuple[int, ...], opening: int, template: tuple[int, ...], last: bool
) -> list[int]:
    """``session``'s bars laid from ``opening`` on the ``template``'s offsets."""
    size, usual = len(session), len(template)
    if size == usual or (size < usual and not last):
        if size == 1:
            return [opening + template[0]]
        wide = usual - 1
        return [
            opening + template[(2 * k * wide + size - 1) // (2 * (size - 1))] for k in range(size)
        ]
    return [opening + (bar - session[0]) for bar in session]


def session_calendar(times: Sequence[str], weeks: int) -> DisguiseCalendar:
    """The source's bar ``times`` (ascending, distinct) laid on sessions, the first
    session's day moved by ``weeks``."""
    source = tuple(seconds_of(time) for time in times)
    sessions = _sessions(source)
    sizes = Counter(len(session) for session in sessions)
    usual = min(sizes, key=lambda size: (-sizes[size], -size))
    model = next(session for session in sessions if len(session) == usual)
    template = tuple(bar - model[0] for bar in model)
    clock = model[0] % _DAY
    days = [_day(session[0]) for session in sessions]
    weekdays = open_weekdays(days)
    step = open_step(days, weekdays)
    cut = len(sessions) > 1 and len(sessions[0]) < usual  # the tape starts mid-session
    day = days[0] + timedelta(weeks=weeks)
    moved: list[int] = []
    for index, session in enumerate(sessions):
        if index:
            day = open_days_after(day, step, weekdays)
        if index == 0 and cut:
            continue
        while True:
            bars = _laid(session, _midnight(day) + clock, template, index == len(sessions) - 1)
            if not moved or bars[0] > moved[-1]:
                break
            day = open_days_after(day, 1, weekdays)
        moved.extend(bars)
        if index == 1 and cut:
            first, second = sessions[0], session[0]
            moved[:0] = [bars[0] - (second - bar) for bar in first]
    return DisguiseCalendar(source, tuple(moved))
