"""Reading checked rows into compact columns, one series per symbol, as the file is read.

A row is kept as numbers in arrays (its row number, UTC time, calendar day) and the text
of its prices and volume in one byte buffer, so a 2,000,000-row file costs about 60 bytes
a row, not the file's rows as objects. What the file-wide checks and the tick need besides
is gathered on the way: whether every time is at midnight, the most decimals a price has,
the highest High and the lowest Low.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from decimal import Decimal

from kestrel_protocol import DEFAULT_DECIMAL_CONTEXT

from ..runtime.catalog.instrument_terms import SYMBOL_PATTERN
from .checks import CheckedRow, check_row
from .layouts import RawBar
from .problems import ImportProblem, Problems

__all__ = ["MAX_DECIMALS", "Scanned", "Series", "places", "scan_rows"]

MAX_DECIMALS = 8
"""The finest tick an import chooses or takes (``1e-8``)."""


def places(value: Decimal) -> int:
    """How many decimals ``value`` needs (``1.50`` needs 1, ``100`` none), read off its
    digits: no arithmetic, so ``1e-999999999`` needs 999999999 rather than overflowing."""
    _, digits, exponent = value.as_tuple()
    assert isinstance(exponent, int)
    significant = "".join(map(str, digits)).rstrip("0")
    return max(0, len(significant) - len(digits) - exponent) if significant else 0


class Series:
    """The checked rows of one symbol in file order (turned round by ``reverse``)."""

    __slots__ = (
        "_ends",
        "_first_noisy",
        "_flipped",
        "_last_noisy",
        "_texts",
        "days",
        "keys",
        "noisy",
        "rows",
        "stamps",
        "symbol",
    )

    def __init__(self, symbol: str) -> None:
        self.symbol = symbol
        self.rows = array("q")  # each row's number in the file
        self.stamps = array("q")  # UTC times, seconds since the epoch
        self.days = array("i")  # day ordinals of each row's own calendar day
        self.keys = self.stamps  # tape times in seconds, once the interval is known
        self._texts = bytearray()  # "open,high,low,close,volume\n" as read
        self._ends = array("q")  # where each row's text ends in ``_texts``
        self._flipped = False
        self.noisy = 0  # volumes a double's noise was rounded off
        self._first_noisy: tuple[int, str, str] | None = None  # row, as read, as kept
        self._last_noisy: tuple[int, str, str] | None = None

    def __len__(self) -> int:
        return len(self.rows)

    def add(self, row: int, checked: CheckedRow, raw: RawBar) -> None:
        self.rows.append(row)
        self.stamps.append(checked.seconds)
        self.days.append(checked.day)
        line = f"{raw.open},{raw.high},{raw.low},{raw.close},{checked.volume}\n"
        self._texts += line.encode("utf-8")
        self._ends.append(len(self._texts))
        if checked.noisy:
            found = (row, checked.noisy, checked.volume)
            if self._first_noisy is None:
                self._first_noisy = found
            self._last_noisy = found
            self.noisy += 1

    def first_noisy(self) -> tuple[int, str, str] | None:
        """The first row (in the series' order) whose volume was rounded from noise:
        ``(row, volume as read, volume kept)``."""
        return self._last_noisy if self._flipped else self._first_noisy

    def reverse(self) -> None:
        """Turn the series round (a newest-first file)."""
        for column in {id(c): c for c in (self.rows, self.stamps, self.days, self.keys)}.values():
            column.reverse()
        self._flipped = not self._flipped

    def fields(self, index: int) -> list[str]:
        """The open, high, low and close texts as read and the volume of row ``index``."""
        if self._flipped:
            index = len(self._ends) - 1 - index
        start = self._ends[index - 1] if index else 0
        return self._texts[start : self._ends[index] - 1].decode("utf-8").split(",")

    def prices(self) -> Iterator[Decimal]:
        """Every price of the series, row by row."""
        for index in range(len(self)):
            yield from map(Decimal, self.fields(index)[:4])


@dataclass(slots=True)
class Scanned:
    """Every checked row by symbol, the faults of the others, and what the checks of the
    whole file need."""

    series: dict[str, Series] = field(default_factory=dict)
    problems: Problems = field(default_factory=Problems)
    midnight: bool = True  # every time is 00:00:00 in its own zone
    decimals: int = 2  # the most decimals a price has (at least 2; 9 for more than 8)
    volume_places: int = 0  # the most decimal places a volume has
    volume_digits: int = 0  # the most digits a volume has before its point
    _quantum: Decimal = Decimal("0.01")  # 1 in the last of those places
    finer: dict[int, Decimal] = field(default_factory=dict)  # places -> first price with more
    naive: int = 0  # times of day without an offset (taken as UTC)
    first_naive: tuple[int, str, int] | None = None  # the first: row, text, UTC seconds
    highest: tuple[Decimal, int, str] | None = None  # the highest High, its row and text
    lowest: tuple[Decimal, int, str] | None = None  # the lowest Low, its row and text

    def add(self, raw: RawBar, name: str) -> None:
        checked = check_row(raw)
        if isinstance(checked, list):
            self.problems.extend(ImportProblem(raw.row, reason) for reason in checked)
            return
        series = self.series.get(name)
        if series is None:
            series = self.series[name] = Series(name)
        series.add(raw.row, checked, raw)
        self.midnight = self.midnight and checked.midnight
        if checked.naive:
            self.naive += 1
            if self.first_naive is None:
                self.first_naive = (raw.row, raw.time, checked.seconds)
        whole, _, fraction = checked.volume.partition(".")
        self.volume_places = max(self.volume_places, len(fraction))
        self.volume_digits = max(self.volume_digits, len(whole))
        for price in checked.prices:
            exact = price.quantize(self._quantum, context=DEFAULT_DECIMAL_CONTEXT) == price
            if not exact:  # more decimals than any before
                needed = min(places(price), MAX_DECIMALS + 1)  # more than 8 is all one
                for fewer in range(self.decimals, needed):
                    self.finer.setdefault(fewer, price)
                self.decimals = needed
                self._quantum = Decimal(1).scaleb(-needed, DEFAULT_DECIMAL_CONTEXT)
        high, low = checked.prices[1], checked.prices[2]
        if self.highest is None or high > self.highest[0]:
            self.highest = (high, raw.row, raw.high)
        if self.lowest is None or low < self.lowest[0]:
            self.lowest = (low, raw.row, raw.low)


def scan_rows(bars: Iterable[RawBar], *, named: bool, symbol: str | None) -> Scanned:
    """Check each row as it is read (all of ``bars`` is read, whatever is found).

    ``named``: the rows carry their symbol; else ``symbol`` names it. Otherwise
    ``symbol`` picks symbols (comma-separated) from the file.
    """
    scanned = Scanned()
    if not named:
        if symbol is None:
            if sum(1 for _ in bars):  # read to the end: a fault in the file comes first
                scanned.problems.append(
                    ImportProblem(None, "the file has no symbol column: name it with --symbol")
                )
            return scanned
        for bar in bars:
            scanned.add(bar, symbol)
        return scanned
    wanted = {name.strip().upper() for name in symbol.split(",")} if symbol else None
    seen: set[str] = set()
    bad_symbols: set[str] = set()
    for bar in bars:
        name = (bar.symbol or "").upper()
        seen.add(name)
        if wanted is not None and name not in wanted:
            continue
        if not SYMBOL_PATTERN.fullmatch(name):
            if name not in bad_symbols:
                bad_symbols.add(name)
                scanned.problems.append(
                    ImportProblem(
                        bar.row,
                        f"symbol {name!r} must match [A-Z][A-Z0-9.]{{0,11}} (--symbol names it)",
                    )
                )
            continue
        scanned.add(bar, name)
    for name in sorted(wanted - seen) if wanted else ():  # no row: listed before any row's
        scanned.problems.append(
            ImportProblem(
                None, f"symbol {name} is not in the file (it has {', '.join(sorted(seen))})"
            )
        )
    return scanned
