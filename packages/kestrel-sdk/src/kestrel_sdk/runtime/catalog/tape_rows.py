"""A tape's lines one at a time: every fault named by its line, else the canonical text.

This is how a tape that is not already canonical is read (CRLF, a BOM, ``101.5`` for
``101.50``, a fault): each line is checked as it comes (its fields, time, symbol, prices,
volume), then the tape's order (times ascending, one bar per symbol at every time) a time
at a time, then, at the end, whether every volume fits the tape's scaled integers. Faults
are reported in that order, as many as the ``limit``. A tape without faults comes out in
canonical form (symbols in code-point order within a time; prices with ``scale`` places;
volumes in their canonical text), a time at a time, for ``tape_columns`` to read. What is
held is the current time's bars and at most a few ``limit``-long lists, never the tape.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from .tape_format import (
    FIELDS,
    HEADER,
    MAX_PRICE_DIGITS,
    TIME,
    TapeProblem,
    day_ordinals,
    decimal_units,
    unit_text,
)
from .volumes import (
    MAX_PLACES,
    MAX_SCALED_DIGITS,
    canonical_volume,
    volume_fault,
    volume_places,
    volume_scale_fault,
)

__all__ = ["TapeRows"]

_SYMBOL = re.compile(r"[A-Z][A-Z0-9.]{0,11}")
_PRICE = re.compile(r"([0-9]+)(?:\.([0-9]+))?")
_WIDE = MAX_SCALED_DIGITS - MAX_PLACES  # a volume with more whole digits may not fit
_LONGEST = 40  # characters of a price text read as it is (a canonical one has at most 16)
_TOO_LARGE: int = 10**MAX_PRICE_DIGITS  # stands for any price of more digits than a tape's


@dataclass(slots=True)
class _Row:
    line: int
    time: str
    symbol: str
    values: tuple[int, int, int, int] | None  # open, high, low, close; None when faulty
    volume: str = "0"  # canonical text


class TapeRows:
    """Checks a tape's lines (``add``, from line 1), then ``finish``: the problems, if any.

    Until the first fault, ``take`` gives the canonical text of the times read so far.
    ``full`` says that ``limit`` problems are found: the rest need not be added.
    """

    def __init__(self, units: Mapping[str, int], scale: int, limit: int) -> None:
        self._units = dict(units)
        self._known = ", ".join(sorted(units))
        self._scale = scale
        self._limit = max(1, limit)
        self._lines = 0
        self._header = False  # line 1 is the header
        self._faults: list[TapeProblem] = []  # of rows, in line order
        self._order: list[TapeProblem] = []  # of the order of times and symbols
        self._previous: str | None = None
        self._group: list[_Row] = []  # the current time's bars (while there is no fault)
        self._first: _Row | None = None  # the current time's first bar
        self._seen: set[str] = set()
        self._places = 0  # the most decimal places of a volume
        self._wide: dict[int, list[tuple[int, str]]] = {}  # whole digits -> (line, volume)
        self._out: list[str] = []

    @property
    def full(self) -> bool:
        return len(self._faults) >= self._limit

    def add(self, number: int, line: str) -> None:
        """Check line ``number`` (1-based, without its LF)."""
        self._lines = number
        if number == 1:
            line = line.removeprefix("\ufeff").removesuffix("\r")
            self._header = line == HEADER
            if not self._header:
                # the line found is not quoted: a file that is no tape is not echoed
                self._fault(1, f"the header must be exactly {HEADER!r}")
            else:
                self._out.append(HEADER + "\n")
            return
        if self._header and not self.full:
            row = self._row(number, line.removesuffix("\r"))
            if row is not None:
                self._in_order(row)

    def take(self) -> str:
        """The canonical text of the times read whole since the last ``take``."""
        text = "".join(self._out)
        self._out.clear()
        return text

    def finish(self) -> list[TapeProblem]:
        """Every problem found (at most ``limit``); none means ``take`` has the rest."""
        if self._lines == 0:
            self._fault(1, f"the header must be exactly {HEADER!r}")
        elif self._lines == 1 and self._header:
            self._fault(None, "the tape has no bars")
        if not self.full:
            self._end_time()
        problems = self._faults + self._order + self._volume_faults()
        if problems:
            self._out.clear()
        return problems[: self._limit]

    def _fault(self, line: int | None, reason: str) -> None:
        if not self.full:
            self._faults.append(TapeProblem(line, reason))
            self._out.clear()

    def _order_fault(self, line: int, reason: str) -> None:
        if len(self._order) < self._limit:
            self._order.append(TapeProblem(line, reason))
        self._out.clear()

    @property
    def clean(self) -> bool:
        """No fault found yet."""
        return not self._faults and not self._order

    def _row(self, number: int, line: str) -> _Row | None:
        fault = self._fault
        if not line.strip():
            fault(number, "empty line")
            return None
        fields = line.split(",")
        if len(fields) != FIELDS:
            fault(number, f"expected {FIELDS} fields ({HEADER}), found {len(fields)}")
            return None
        time, symbol, *price_texts, volume_text = fields
        bad = False
        if TIME.fullmatch(time) is None or day_ordinals([time]) is None:
            fault(number, f"time {time!r} is not an ISO-8601 UTC time like 2024-03-01T15:30:00Z")
            return None
        if not _SYMBOL.fullmatch(symbol) or symbol not in self._units:
            fault(number, f"unknown symbol {symbol!r} (the instruments are {self._known})")
            return None
        unit = self._units[symbol]
        values: list[int] = []
        for name, price_text in zip(("open", "high", "low", "close"), price_texts, strict=True):
            value = _scaled(price_text, self._scale)
            if value is None and _PRICE.fullmatch(price_text):
                fault(number, f"{name} {price_text} of {symbol} is not on its tick grid")
                bad = True
            elif value is None:
                fault(number, f"{name} {price_text!r} is not a decimal price like 101.25")
                bad = True
            elif len(str(value)) > MAX_PRICE_DIGITS:
                fault(number, f"{name} {price_text} is too large")
                bad = True
            elif value <= 0:
                fault(number, f"{name} {price_text} must be greater than 0")
                bad = True
            elif value % unit:
                tick = unit_text(unit, self._scale)
                fault(number, f"{name} {price_text} of {symbol} is not on its tick grid ({tick})")
                bad = True
            else:
                values.append(value)
        volume = canonical_volume(volume_text)
        reason = None if volume is None else volume_fault(volume)
        if volume is None:
            fault(number, f"volume {volume_text!r} must be a non-negative decimal like 1200 or 0.5")
            bad = True
        elif reason is not None:
            fault(number, f"volume {volume_text} {reason}")
            bad = True
        if bad or volume is None:
            return _Row(number, time, symbol, None)
        open_, high, low, close = values
        if not (low <= open_ <= high and low <= close <= high):
            fault(number, "prices are inconsistent: need low <= open, close <= high")
            return _Row(number, time, symbol, None)
        self._volume(number, volume)
        return _Row(number, time, symbol, (open_, high, low, close), volume)

    def _in_order(self, row: _Row) -> None:
        """Rows sorted by time, exactly one bar per instrument at every time."""
        first = self._first
        if first is None or row.time != first.time:
            self._end_time()
            self._first, self._seen = row, set()
            previous = self._previous
            if previous is not None and row.time <= previous:
                self._order_fault(
                    row.line,
                    f"time {row.time} is not after the previous time {previous} "
                    "(rows must be sorted by time)",
                )
            self._previous = max(previous or row.time, row.time)
        if row.symbol in self._seen:
            self._order_fault(row.line, f"a second bar for {row.symbol} at {row.time}")
        self._seen.add(row.symbol)
        if self.clean:
            self._group.append(row)

    def _end_time(self) -> None:
        """The current time is read whole: a fault for each symbol without a bar, else
        its canonical rows (by symbol)."""
        first = self._first
        if first is None:
            return
        for symbol in sorted(self._units.keys() - self._seen):
            self._order_fault(
                first.line, f"no bar for {symbol} at {first.time} (every symbol needs one)"
            )
        if self.clean:
            scale = self._scale
            for row in sorted(self._group, key=lambda row: row.symbol):
                assert row.values is not None
                prices = ",".join(unit_text(value, scale) for value in row.values)
                self._out.append(f"{row.time},{row.symbol},{prices},{row.volume}\n")
        self._group.clear()
        self._first = None

    def _volume(self, line: int, volume: str) -> None:
        """Note a volume: the tape's places, and the first ``limit`` of those whose whole
        part might not fit once they are known."""
        self._places = max(self._places, volume_places(volume))
        digits = len(volume.partition(".")[0])
        if digits > _WIDE:
            wide = self._wide.setdefault(digits, [])
            if len(wide) < self._limit:
                wide.append((line, volume))

    def _volume_faults(self) -> list[TapeProblem]:
        """Every volume (first ``limit``) the tape's scaled integers cannot hold."""
        found: list[TapeProblem] = []
        for line, volume in sorted(item for wide in self._wide.values() for item in wide):
            reason = volume_scale_fault(volume, self._places)
            if reason is not None:
                found.append(TapeProblem(line, f"volume {volume} {reason}"))
        return found[: self._limit]


def _scaled(text: str, scale: int) -> int | None:
    """A decimal price as an integer in ``10**-scale`` units; ``None`` if it needs more."""
    match = _PRICE.fullmatch(text)
    if not match or len((match.group(2) or "").rstrip("0")) > scale:
        return None
    if len(text) > _LONGEST:  # no int() of thousands of digits (zeros in front, or not)
        whole = match.group(1).lstrip("0")
        if len(whole) > MAX_PRICE_DIGITS:
            return _TOO_LARGE
        text = f"{whole or '0'}.{match.group(2) or ''}"
    return decimal_units(text, scale)
