"""Checking imported rows and turning them into the bars of a canonical tape.

Every fault is collected (one problem per fault, with its row), so a user fixes a file
in one pass. The rules are the tape's own (docs/spec.md §4) plus what an import can check that a
tape cannot: duplicates and order per symbol, one interval throughout.

Times: ISO-8601 with or without a zone (none means UTC), a date alone, or epoch
seconds / milliseconds / microseconds / nanoseconds (told apart by magnitude). On a daily
tape each bar is dated by its calendar day (the local date of a time with an offset, so
``2024-03-11 00:00:00-04:00`` is 2024-03-11) at ``00:00:00Z``.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, time, timedelta
from decimal import ROUND_HALF_EVEN, Decimal, InvalidOperation
from itertools import pairwise

from ..runtime.catalog.terms import INTERVAL_SECONDS, INTERVALS, SYMBOL_PATTERN
from .layouts import ImportProblem, RawBar
from .volumes import import_volume, noise_note, volume_problems

__all__ = ["Bars", "convert_bars"]

_EPOCH = re.compile(r"-?[0-9]+")
_FRACTION = re.compile(r":[0-9]{2}[.,]([0-9]+)")  # Python keeps only 6 digits of it
_MAX_DECIMALS = 8
_FLOAT32_NOISE = Decimal(2) ** -23  # relative error of a price that went through float32
_PRICE_LIMIT = Decimal(10) ** 12  # the tape's prices have at most 12 integer digits


@dataclass(frozen=True, slots=True)
class Bars:
    """Checked bars: ``rows`` are ``(time, symbol, open, high, low, close, volume)`` in
    canonical order, prices as decimal strings with ``scale`` places, volumes in their
    canonical decimal text (``volumes.py``)."""

    symbols: tuple[str, ...]
    interval: str
    tick: str
    scale: int
    rows: list[tuple[str, str, str, str, str, str, str]]
    notes: list[str]

    @property
    def times(self) -> list[str]:
        return [row[0] for row in self.rows[:: len(self.symbols)]]


@dataclass(slots=True)
class _Row:
    row: int
    stamp: datetime  # UTC
    day: str  # the calendar day the row's own time names (local date when it has an offset)
    midnight: bool  # the row's own time is 00:00:00 (a date, in whatever zone)
    symbol: str
    prices: tuple[Decimal, Decimal, Decimal, Decimal]
    volume: str  # canonical text: exact, never a float
    noisy: str  # the file's text when a double's noise was rounded off the volume, else ""
    time: str = ""  # the canonical time, once the interval is known


def _parse_time(text: str) -> tuple[datetime, str, bool] | str:
    """(UTC time, its calendar day, at midnight) or the reason it is not a time."""
    if not text:
        return "the time is empty"
    if _EPOCH.fullmatch(text):
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
        if rest:
            return f"time {text} has fractions of a second"
        try:
            stamp = datetime(1970, 1, 1, tzinfo=UTC) + timedelta(seconds=seconds)
        except OverflowError:
            return f"time {text} is out of range"
        return stamp, stamp.date().isoformat(), stamp.time() == time()
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        return f"time {text!r} is not a date or an ISO-8601 time like 2024-03-01T15:30:00Z"
    fraction = _FRACTION.search(text)
    if parsed.microsecond or (fraction and fraction.group(1).strip("0")):
        return f"time {text} has fractions of a second"
    day = parsed.date().isoformat()
    stamp = parsed.astimezone(UTC) if parsed.tzinfo else parsed.replace(tzinfo=UTC)
    return stamp, day, parsed.time() == time()


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


def _check_row(raw: RawBar, symbol: str) -> _Row | list[str]:
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
        elif value <= 0:
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
            faults.extend(
                f"{name} {text} is outside Low {raw.low} .. High {raw.high}"
                for name, text, value in (("Open", raw.open, open_), ("Close", raw.close, close))
                if not low <= value <= high
            )
    if faults or isinstance(when, str) or isinstance(volume, str):
        return faults
    stamp, day, midnight = when
    four = (prices[0], prices[1], prices[2], prices[3])
    kept, rounded = volume
    return _Row(raw.row, stamp, day, midnight, symbol, four, kept, raw.volume if rounded else "")


def _symbols(
    bars: Sequence[RawBar], symbol: str | None, problems: list[ImportProblem]
) -> list[tuple[RawBar, str]]:
    """Each row with its symbol; ``symbol`` names a one-symbol file or picks from a long one."""
    if bars and bars[0].symbol is None:
        if symbol is None:
            problems.append(
                ImportProblem(None, "the file has no symbol column: name it with --symbol")
            )
            return []
        return [(bar, symbol) for bar in bars]
    wanted = {name.strip().upper() for name in symbol.split(",")} if symbol else None
    first_row: dict[str, int] = {}
    picked: list[tuple[RawBar, str]] = []
    for bar in bars:
        name = (bar.symbol or "").upper()
        first_row.setdefault(name, bar.row)
        if wanted is None or name in wanted:
            picked.append((bar, name))
    for name in sorted(wanted - set(first_row)) if wanted else ():
        found = ", ".join(sorted(first_row))
        problems.append(ImportProblem(None, f"symbol {name} is not in the file (it has {found})"))
    return picked


def _interval(rows: Sequence[_Row], given: str | None, problems: list[ImportProblem]) -> str | None:
    if given is not None:
        if given not in INTERVALS:
            problems.append(
                ImportProblem(None, f"interval {given!r} must be one of {', '.join(INTERVALS)}")
            )
            return None
        return given
    if all(row.midnight for row in rows):
        return "1d"  # dates (at midnight in their zone): a daily file, however sparse
    stamps = sorted({row.stamp for row in rows})
    gaps = Counter(int((b - a).total_seconds()) for a, b in pairwise(stamps))
    if not gaps:
        return "1d"  # one bar: nothing to measure; a day is the common case
    common = max(gaps.items(), key=lambda item: (item[1], -item[0]))[0]
    if 20 * 3600 <= common <= 28 * 3600:
        return "1d"
    for name, seconds in INTERVAL_SECONDS.items():
        if common == seconds:
            return name
    problems.append(
        ImportProblem(
            None,
            f"the bars are {timedelta(seconds=common)} apart; a tape's interval is 1m, 5m, 1h "
            "or 1d (resample the file, or pass --interval if the gaps mislead)",
        )
    )
    return None


def _order(rows: list[_Row], problems: list[ImportProblem], notes: list[str]) -> list[_Row]:
    """Rows of each symbol ascending by time; a wholly newest-first file is turned round."""
    by_symbol: dict[str, list[_Row]] = defaultdict(list)
    for row in rows:
        by_symbol[row.symbol].append(row)
    ordered: list[_Row] = []
    for symbol in sorted(by_symbol):
        items = by_symbol[symbol]
        if len(items) > 1 and all(a.time > b.time for a, b in pairwise(items)):
            items.reverse()
            notes.append(f"{symbol}: rows were newest first; turned round")
        seen: dict[str, int] = {}
        previous: _Row | None = None
        for row in items:
            if row.time in seen:
                problems.append(
                    ImportProblem(
                        row.row,
                        f"duplicate time {row.time} for {symbol} (also row {seen[row.time]})",
                    )
                )
            elif previous is not None and row.time < previous.time:
                problems.append(
                    ImportProblem(
                        row.row,
                        f"time {row.time} is before the previous row's {previous.time} "
                        "(rows must be sorted by time)",
                    )
                )
            seen.setdefault(row.time, row.row)
            previous = row if previous is None or row.time > previous.time else previous
        ordered.extend(items)
    return ordered


def _gaps(rows: Sequence[_Row], interval: str, problems: list[ImportProblem]) -> None:
    """Every time on the grid of the first one (a whole number of intervals after it)."""
    step = INTERVAL_SECONDS[interval]
    first_row: dict[str, int] = {}
    for row in rows:
        first_row[row.time] = min(first_row.get(row.time, row.row), row.row)
    times = sorted(first_row)
    origin = datetime.fromisoformat(times[0])
    for moment in times[1:]:
        offset = int((datetime.fromisoformat(moment) - origin).total_seconds()) % step
        if offset:
            problems.append(
                ImportProblem(
                    first_row[moment],
                    f"time {moment} is {timedelta(seconds=offset)} off the {interval} grid of "
                    f"the other bars (mixed intervals)",
                )
            )


def _complete(rows: Sequence[_Row], symbols: Sequence[str], problems: list[ImportProblem]) -> None:
    at: dict[str, dict[str, int]] = defaultdict(dict)
    for row in rows:
        at[row.time].setdefault(row.symbol, row.row)
    for moment in sorted(at):
        present = at[moment]
        for symbol in symbols:
            if symbol not in present:
                problems.append(
                    ImportProblem(
                        min(present.values()),
                        f"no bar for {symbol} at {moment} (every symbol needs a bar at every time)",
                    )
                )


def _places(value: Decimal) -> int:
    exponent = value.normalize().as_tuple().exponent
    assert isinstance(exponent, int)
    return max(0, -exponent)


def _tick(
    rows: Sequence[_Row], given: str | None, problems: list[ImportProblem], notes: list[str]
) -> Decimal | None:
    """``given``, else the fewest decimals (at least 2) that hold every price to float32
    precision: files written from 32-bit floats (Yahoo's ``187.149994`` for 187.15, or
    ``185.63999938964844``) get their intended tick, exact decimals keep theirs."""
    if given is not None:
        try:
            tick = Decimal(given)
        except InvalidOperation:
            tick = Decimal(0)
        if not tick.is_finite() or tick <= 0 or _places(tick) > _MAX_DECIMALS:
            problems.append(
                ImportProblem(None, f"tick {given!r} must be a positive decimal no finer than 1e-8")
            )
            return None
        return tick
    prices = [price for row in rows for price in row.prices]
    exact = max(2, *(_places(price) for price in prices))
    places = next(
        (
            places
            for places in range(2, min(exact, _MAX_DECIMALS))
            if all(abs(p - round(p, places)) <= p * _FLOAT32_NOISE for p in prices)
        ),
        min(exact, _MAX_DECIMALS),
    )
    tick = Decimal(1).scaleb(-places)
    if places < exact:
        example = next(price for price in prices if _places(price) > places)
        notes.append(
            f"prices rounded to the tick {tick:f}: {example} is {round(example, places)} "
            "stored as a binary float (--tick chooses another tick)"
        )
    return tick


def _scaled_rows(
    rows: Sequence[_Row], tick: Decimal, scale: int
) -> list[tuple[str, str, str, str, str, str, str]]:
    quantum = Decimal(1).scaleb(-scale)
    out: list[tuple[str, str, str, str, str, str, str]] = []
    for row in sorted(rows, key=lambda item: (item.time, item.symbol)):
        texts = [
            f"{((price / tick).to_integral_value(ROUND_HALF_EVEN) * tick).quantize(quantum):f}"
            for price in row.prices
        ]
        out.append((row.time, row.symbol, texts[0], texts[1], texts[2], texts[3], row.volume))
    return out


def convert_bars(
    raw: Sequence[RawBar],
    *,
    symbol: str | None = None,
    interval: str | None = None,
    tick: str | None = None,
) -> Bars | list[ImportProblem]:
    """The checked bars of ``raw``, or every problem found (sorted by row)."""
    problems: list[ImportProblem] = []
    notes: list[str] = []
    rows: list[_Row] = []
    bad_symbols: set[str] = set()
    for bar, name in _symbols(raw, symbol, problems):
        if not SYMBOL_PATTERN.fullmatch(name):
            if name not in bad_symbols:
                bad_symbols.add(name)
                problems.append(
                    ImportProblem(
                        bar.row,
                        f"symbol {name!r} must match [A-Z][A-Z0-9.]{{0,11}} (--symbol names it)",
                    )
                )
            continue
        checked = _check_row(bar, name)
        if isinstance(checked, list):
            problems.extend(ImportProblem(bar.row, reason) for reason in checked)
        else:
            rows.append(checked)
    if not rows:
        return _sorted(problems) or [ImportProblem(None, "no bars")]
    found = _interval(rows, interval, problems)
    if found is None:
        return _sorted(problems)
    for row in rows:
        row.time = (
            f"{row.day}T00:00:00Z" if found == "1d" else row.stamp.strftime("%Y-%m-%dT%H:%M:%SZ")
        )
    ordered = _order(rows, problems, notes)
    note = noise_note([(row.row, row.noisy, row.volume) for row in ordered if row.noisy])
    notes.extend([note] if note else [])
    symbols = tuple(sorted({row.symbol for row in rows}))
    _gaps(ordered, found, problems)
    _complete(ordered, symbols, problems)
    problems.extend(volume_problems([(row.row, row.volume) for row in ordered]))
    chosen = _tick(rows, tick, problems, notes)
    if problems or chosen is None:
        return _sorted(problems)
    scale = _places(chosen)
    return Bars(symbols, found, f"{chosen:f}", scale, _scaled_rows(ordered, chosen, scale), notes)


def _sorted(problems: list[ImportProblem]) -> list[ImportProblem]:
    return sorted(problems, key=lambda problem: problem.row or 0)
