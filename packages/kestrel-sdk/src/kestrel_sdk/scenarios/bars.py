"""Checking the rows of a file together, and choosing the tape's interval and tick.

Every fault is collected (one problem per fault, with its row), so a user fixes a file
in one pass. The rules are the tape's own (docs/spec.md §4) plus what an import can check
that a tape cannot: duplicates and order per symbol, one interval throughout. The checks
walk the compact columns ``scan_rows`` made (``series.py``), in time order, holding no
more than a row per symbol: a file already in order is never sorted.

On a daily tape each bar is dated by its calendar day (see ``checks.py``) at ``00:00:00Z``.
"""

from __future__ import annotations

import heapq
from array import array
from bisect import bisect_left
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import timedelta
from decimal import ROUND_HALF_EVEN, Decimal, InvalidOperation, localcontext
from itertools import islice, pairwise, repeat
from operator import ge, gt, le, lt

from kestrel_protocol import DEFAULT_DECIMAL_CONTEXT

from ..runtime.catalog.terms import INTERVAL_SECONDS, INTERVALS
from ..runtime.catalog.volumes import MAX_SCALED_DIGITS
from .checks import EPOCH_DAY, naive_note, time_text
from .problems import ImportProblem, Problems
from .series import MAX_DECIMALS, Scanned, Series, places
from .volumes import noise_note, volume_problems

__all__ = ["Bars", "convert_bars"]

# the relative error of a price that went through float32
_FLOAT32_NOISE = DEFAULT_DECIMAL_CONTEXT.power(2, -23)
_MAX_DIGITS = 15  # the tape's scaled prices have at most 15 digits
_DAY = 86_400


@dataclass(frozen=True, slots=True)
class Bars:
    """Checked bars: one series per symbol (in symbol order), each in time order and all at
    the same times; prices go on the grid of ``tick`` with ``scale`` places."""

    symbols: tuple[str, ...]
    interval: str
    tick: Decimal
    scale: int
    series: tuple[Series, ...]
    notes: list[str]

    def __len__(self) -> int:
        return len(self.series[0])

    @property
    def start(self) -> str:
        return time_text(self.series[0].keys[0])

    @property
    def end(self) -> str:
        return time_text(self.series[0].keys[-1])


def _ascending(column: Sequence[int], strictly: bool = False) -> bool:
    return all(map(lt if strictly else le, column, islice(column, 1, None)))


def _interval(scanned: Scanned, given: str | None, problems: Problems) -> str | None:
    if given is not None:
        if given not in INTERVALS:
            problems.append(
                ImportProblem(None, f"interval {given!r} must be one of {', '.join(INTERVALS)}")
            )
            return None
        return given
    if scanned.midnight:
        return "1d"  # dates (at midnight in their zone): a daily file, however sparse
    stamps = heapq.merge(*(_in_order(series.stamps) for series in scanned.series.values()))
    gaps = Counter(b - a for a, b in pairwise(stamps) if b != a)
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


def _in_order(column: array[int]) -> Iterable[int]:
    if _ascending(column):
        return column
    if all(map(ge, column, islice(column, 1, None))):
        return reversed(column)
    return sorted(column)


def _order(series: Series, problems: Problems, notes: list[str]) -> bool:
    """Whether the rows of ``series`` are in time order (a wholly newest-first series is
    turned round); if not, a problem for each row out of order or at a time seen before."""
    keys = series.keys
    if len(keys) > 1 and all(map(gt, keys, islice(keys, 1, None))):
        series.reverse()
        notes.append(f"{series.symbol}: rows were newest first; turned round")
        return True
    if _ascending(keys, strictly=True):
        return True
    # seen = the times that kept rising (a sorted column) and those that came late
    rising, rising_rows = array("q"), array("q")
    late: dict[int, int] = {}
    for key, row in zip(keys, series.rows, strict=True):
        if rising and key <= rising[-1]:
            at = bisect_left(rising, key)
            first = rising_rows[at] if rising[at] == key else late.get(key)
            if first is not None:
                problems.append(
                    ImportProblem(
                        row,
                        f"duplicate time {time_text(key)} for {series.symbol} (also row {first})",
                    )
                )
            else:
                problems.append(
                    ImportProblem(
                        row,
                        f"time {time_text(key)} is before the previous row's "
                        f"{time_text(rising[-1])} (rows must be sorted by time)",
                    )
                )
                late[key] = row
        else:
            rising.append(key)
            rising_rows.append(row)
    return False


def _by_time(series: Sequence[Series], in_order: Sequence[bool]) -> Iterator[tuple[int, int, str]]:
    """``(time, row, symbol)`` of every row, by time then row."""
    streams = [
        zip(one.keys, one.rows, repeat(one.symbol))
        if ordered
        else iter(sorted(zip(one.keys, one.rows, repeat(one.symbol))))
        for one, ordered in zip(series, in_order, strict=True)
    ]
    return heapq.merge(*streams)


def _grid(
    series: Sequence[Series], in_order: Sequence[bool], interval: str, problems: Problems
) -> None:
    """Every time on the grid of the first one (a whole number of intervals after it), and
    a bar of every symbol at every time."""
    step = INTERVAL_SECONDS[interval]
    symbols = [one.symbol for one in series]
    origin: int | None = None

    def check(moment: int, row: int, present: set[str]) -> None:
        nonlocal origin
        if origin is None:
            origin = moment
        elif offset := (moment - origin) % step:
            problems.append(
                ImportProblem(
                    row,
                    f"time {time_text(moment)} is {timedelta(seconds=offset)} off the {interval} "
                    "grid of the other bars (mixed intervals)",
                )
            )
        if len(present) < len(symbols):
            problems.extend(
                ImportProblem(
                    row,
                    f"no bar for {symbol} at {time_text(moment)} "
                    "(every symbol needs a bar at every time)",
                )
                for symbol in symbols
                if symbol not in present
            )

    current: tuple[int, int, set[str]] | None = None
    for moment, row, symbol in _by_time(series, in_order):
        if current is not None and current[0] == moment:
            current[2].add(symbol)
            continue
        if current is not None:
            check(*current)
        current = (moment, row, {symbol})
    if current is not None:
        check(*current)


def _volumes(scanned: Scanned, series: Sequence[Series], problems: Problems) -> None:
    """A problem for each volume the tape cannot hold with the most decimal places of them
    all (none can when the longest whole part and those places fit)."""
    places = scanned.volume_places
    if scanned.volume_digits + places <= MAX_SCALED_DIGITS:
        return
    volumes = ((row, one.fields(index)[4]) for one in series for index, row in enumerate(one.rows))
    problems.extend(volume_problems(volumes, places))


def _tick(
    scanned: Scanned, given: str | None, problems: Problems, notes: list[str]
) -> Decimal | None:
    """``given``, else the fewest decimals (at least 2) that hold every price to float32
    precision: files written from 32-bit floats (Yahoo's ``187.149994`` for 187.15, or
    ``185.63999938964844``) get their intended tick, exact decimals keep theirs, and
    prices finer than a tape holds are rounded to its finest tick, 1e-8 (noted both ways)."""
    if given is not None:
        try:
            tick = Decimal(given)
        except InvalidOperation:
            tick = Decimal(0)
        if (
            not tick.is_finite()
            or tick <= 0
            or places(tick) > MAX_DECIMALS
            or tick.adjusted() >= _MAX_DIGITS
        ):
            problems.append(
                ImportProblem(
                    None,
                    f"tick {given!r} must be a positive decimal no finer than 1e-8 and under 1e15",
                )
            )
            return None
        return tick
    exact = scanned.decimals

    def prices() -> Iterator[Decimal]:
        for series in scanned.series.values():
            yield from series.prices()

    with localcontext(DEFAULT_DECIMAL_CONTEXT):
        chosen = next(
            (
                count
                for count in range(2, min(exact, MAX_DECIMALS + 1))
                if all(abs(p - round(p, count)) <= p * _FLOAT32_NOISE for p in prices())
            ),
            None,
        )
        cut = chosen is None and exact > MAX_DECIMALS  # not a float's noise: finer than a tape
        chosen = min(exact, MAX_DECIMALS) if chosen is None else chosen
        tick = Decimal(1).scaleb(-chosen)
        if chosen < exact:
            example, rounded = scanned.finer[chosen], round(scanned.finer[chosen], chosen)
            notes.append(
                f"prices rounded to the tick {tick:f}, the finest a tape holds: {example} is "
                f"{rounded} (--tick chooses another tick)"
                if cut
                else f"prices rounded to the tick {tick:f}: {example} is {rounded} stored as a "
                "binary float (--tick chooses another tick)"
            )
    return tick


def _off_the_tape(scanned: Scanned, tick: Decimal) -> Problems:
    """The highest High if it needs more digits than a tape holds on the grid of ``tick``,
    the lowest Low if it rounds to 0 there."""
    assert scanned.highest is not None
    assert scanned.lowest is not None
    problems = Problems()
    context = DEFAULT_DECIMAL_CONTEXT
    price, row, text = scanned.lowest
    if context.divide(price, tick).to_integral_value(ROUND_HALF_EVEN) <= 0:
        problems.append(ImportProblem(row, f"Low {text} is 0 on the grid of the tick {tick:f}"))
    price, row, text = scanned.highest
    limit = Decimal(10 ** (_MAX_DIGITS - places(tick)))
    on_grid = context.divide(price, tick).to_integral_value(ROUND_HALF_EVEN)
    if context.multiply(on_grid, tick) >= limit:
        problems.append(
            ImportProblem(
                row,
                f"High {text} has too many digits on the grid of the tick {tick:f} "
                f"(a tape's prices have at most {_MAX_DIGITS})",
            )
        )
    return problems


def convert_bars(
    scanned: Scanned, *, interval: str | None = None, tick: str | None = None
) -> Bars | Problems:
    """The checked bars of ``scanned``, or the problems found (the first by row kept,
    every one counted)."""
    problems = scanned.problems
    notes: list[str] = []
    if not scanned.series:
        return problems or Problems([ImportProblem(None, "no bars")])
    found = _interval(scanned, interval, problems)
    if found is None:
        return problems
    series = tuple(scanned.series[symbol] for symbol in sorted(scanned.series))
    for one in series:
        if found == "1d":
            one.keys = array("q", [(day - EPOCH_DAY) * _DAY for day in one.days])
        else:
            one.keys = one.stamps
    in_order = [_order(one, problems, notes) for one in series]
    noisy = [(first, one.noisy) for one in series if (first := one.first_noisy()) is not None]
    if noisy:
        notes.append(noise_note(noisy[0][0], sum(count for _, count in noisy)))
    if scanned.first_naive is not None and found != "1d":  # a day is a day in any zone
        notes.append(naive_note(scanned.first_naive, scanned.naive))
    _grid(series, in_order, found, problems)
    _volumes(scanned, series, problems)
    chosen = _tick(scanned, tick, problems, notes)
    if problems or chosen is None:
        return problems
    faults = _off_the_tape(scanned, chosen)
    if faults:
        return faults
    symbols = tuple(one.symbol for one in series)
    return Bars(symbols, found, chosen, places(chosen), series, notes)
