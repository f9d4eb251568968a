"""A US stock's hourly bars of 2019 in UTC, and an agent's reading of a tape's sessions.

The exchange opens at 09:30 New York time (13:30 UTC in summer time, 14:30 in winter),
bars start on the half hour, seven a day (the last at 15:30); it closes on its holidays
and at 13:00 on its half days (four bars). Prices walk by a fixed generator (no
randomness), so the file is the same on every machine. Issue 48's disguise attacks read
it as an agent would read any tape: by its sessions (runs of bars without a long gap).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from itertools import pairwise
from pathlib import Path

__all__ = ["HALF_DAYS", "HOLIDAYS", "Session", "read_sessions", "write_exchange_bars"]

HOLIDAYS = frozenset(
    date(2019, month, day)
    for month, day in ((1, 1), (1, 21), (2, 18), (4, 19), (5, 27), (7, 4), (9, 2), (11, 28))
) | {date(2019, 12, 25)}
HALF_DAYS = frozenset({date(2019, 7, 3), date(2019, 11, 29), date(2019, 12, 24)})
_SUMMER = (date(2019, 3, 10), date(2019, 11, 3))  # US summer time, 2019
_FORMAT = "%Y-%m-%dT%H:%M:%SZ"


def _bar_times() -> list[datetime]:
    times: list[datetime] = []
    day = date(2019, 1, 1)
    while day.year == 2019:
        if day.weekday() < 5 and day not in HOLIDAYS:
            utc_hour = 13 if _SUMMER[0] <= day < _SUMMER[1] else 14
            opening = datetime(day.year, day.month, day.day, utc_hour, 30, tzinfo=UTC)
            bars = 4 if day in HALF_DAYS else 7
            times.extend(opening + timedelta(hours=k) for k in range(bars))
        day += timedelta(days=1)
    return times


def write_exchange_bars(path: Path) -> Path:
    """Write the bar file (``time,symbol,open,high,low,close,volume``) and return it."""
    state, price = 20_190_101, 10_000  # cents
    rows = ["time,symbol,open,high,low,close,volume"]
    for stamp in _bar_times():
        state = (state * 6_364_136_223_846_793_005 + 1_442_695_040_888_963_407) % 2**64
        close = max(price + (state >> 33) % 81 - 40, 100)
        high = max(price, close) + (state >> 20) % 13
        low = min(price, close) - (state >> 10) % 13
        volume = 1_000 + (state >> 44) % 9_000
        rows.append(
            f"{stamp.strftime(_FORMAT)},ACME,{price / 100:.2f},{high / 100:.2f},"
            f"{low / 100:.2f},{close / 100:.2f},{volume}"
        )
        price = close
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


@dataclass(frozen=True, slots=True)
class Session:
    """A run of bars with no gap longer than six hours: its first and last bar, its count."""

    opens: datetime
    closes: datetime
    bars: int


def read_sessions(times: Sequence[str]) -> list[Session]:
    """A tape's sessions, as an agent reads them from its bar times."""
    stamps = [datetime.strptime(time, _FORMAT).replace(tzinfo=UTC) for time in times]
    starts = [0] + [
        index + 1 for index, (a, b) in enumerate(pairwise(stamps)) if b - a > timedelta(hours=6)
    ]
    ends = [*starts[1:], len(stamps)]
    return [Session(stamps[a], stamps[b - 1], b - a) for a, b in zip(starts, ends, strict=True)]
