"""Tape CSV: validation, the canonical bytes, and compact columns.

Two paths share one set of rules. The *fast path* accepts only text already in
canonical form and checks it column-wise with C-speed builtins, so the 200,000-bar
shipped tape parses well under a second. Anything else (CRLF, a BOM, ``101.5`` for
``101.50``, a fault) takes the *slow path*, which walks the rows one by one, names the
line of every fault, and otherwise normalises the text to canonical form, which is then
parsed by the fast path. The tape root is the root of the canonical bytes, so two
spellings of the same bars share a root.

Canonical form: UTF-8, LF line ends, the header ``time,symbol,open,high,low,close,volume``,
one row per (time, symbol), times ascending and, within a time, symbols in code-point
order; prices with exactly ``scale`` decimals and no leading zeros; volumes as
non-negative decimals in their canonical text (:mod:`.volumes`: ``120000``,
``2012.25343589``; no leading zeros, no trailing zeros after the point); a final LF.
"""

from __future__ import annotations

import operator
import re
from array import array
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from itertools import islice, repeat
from types import MappingProxyType

from kestrel_protocol import root_of_bytes

from .model import SymbolColumns, Tape
from .volumes import (
    MAX_PLACES,
    MAX_SCALED_DIGITS,
    MAX_WHOLE_DIGITS,
    canonical_volume,
    scaled_volume,
    tape_places,
    volume_fault,
    volume_scale_fault,
)

__all__ = [
    "HEADER",
    "TapeProblem",
    "TapeShape",
    "parse_tape",
    "render_tape",
    "shape_of_canonical",
]

HEADER = "time,symbol,open,high,low,close,volume"
_FIELDS = 7
_TIME = re.compile(r"([0-9]{4}-[0-9]{2}-[0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2})Z")
_SYMBOL = re.compile(r"[A-Z][A-Z0-9.]{0,11}")
_PRICE = re.compile(r"([0-9]+)(?:\.([0-9]+))?")
_VOLUME = rf"(?:0|[1-9][0-9]{{0,{MAX_WHOLE_DIGITS - 1}}})(?:\.[0-9]{{0,{MAX_PLACES - 1}}}[1-9])?"
_SCALED_LIMIT = 10**MAX_SCALED_DIGITS
_MAX_DIGITS = 15  # keeps every scaled value far inside int64 and the JSON safe range
_PATTERNS: dict[int, re.Pattern[str]] = {}

_FaultFn = Callable[[int | None, str], None]


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


def _canonical_pattern(scale: int) -> re.Pattern[str]:
    pattern = _PATTERNS.get(scale)
    if pattern is None:
        price = r"(?:0|[1-9][0-9]{0,11})" + (rf"\.[0-9]{{{scale}}}" if scale else "")
        row = (
            r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z,[A-Z][A-Z0-9.]{0,11},"
            rf"{price},{price},{price},{price},{_VOLUME}\n"
        )
        pattern = re.compile(re.escape(HEADER) + r"\n(?:" + row + ")+")
        _PATTERNS[scale] = pattern
    return pattern


def shape_of_canonical(data: bytes, symbol_count: int) -> TapeShape | None:
    """Bars, first and last time and root of canonical bytes, by counting lines only.

    Used for shipped tapes (committed in canonical form, which a test proves), so that
    loading the catalog costs a hash, not a parse. ``None`` when the bytes plainly are
    not canonical (header, final LF, whole rows); the first parse checks the rest.
    """
    head = (HEADER + "\n").encode("ascii")
    rows = data.count(b"\n") - 1
    if not data.startswith(head) or not data.endswith(b"\n") or rows < symbol_count:
        return None
    if rows % symbol_count:
        return None
    start_at = len(head)
    last_at = data.rfind(b"\n", 0, len(data) - 1) + 1
    try:
        start = data[start_at : start_at + 20].decode("ascii")
        end = data[last_at : last_at + 20].decode("ascii")
    except UnicodeDecodeError:
        return None
    if not _TIME.fullmatch(start) or not _TIME.fullmatch(end):
        return None
    return TapeShape(bars=rows // symbol_count, start=start, end=end, root=root_of_bytes(data))


def parse_tape(
    data: bytes,
    ticks: Mapping[str, str],
    scale: int,
    *,
    limit: int = 1,
) -> Tape | list[TapeProblem]:
    """The tape, or up to ``limit`` problems (each with its CSV line where known).

    ``ticks`` maps each instrument symbol to its tick (a decimal string); the tape must
    hold exactly those symbols. ``scale`` is the number of decimals prices carry.
    """
    units = _tick_units(ticks, scale)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        return [TapeProblem(line, "not UTF-8 text")]
    tape = _fast(text, data, units, scale)
    if tape is not None:
        return tape
    canonical = _slow(text, units, scale, max(1, limit))
    if isinstance(canonical, list):
        return canonical
    encoded = canonical.encode("utf-8")
    tape = _fast(canonical, encoded, units, scale)
    if tape is None:  # pragma: no cover - the slow path enforces every rule of the fast one
        return [TapeProblem(None, "internal error: normalised tape failed validation")]
    return tape


def render_tape(tape: Tape) -> str:
    """The canonical CSV text of a tape (its root is ``tape.root``)."""
    price = tape.price_text
    volume = tape.volume_text
    parts: list[str] = [HEADER, "\n"]
    columns = [(symbol, tape.columns[symbol]) for symbol in tape.symbols]
    for index, time in enumerate(tape.times):
        for symbol, col in columns:
            parts.append(
                f"{time},{symbol},{price(col.open[index])},{price(col.high[index])},"
                f"{price(col.low[index])},{price(col.close[index])},{volume(col.volume[index])}\n"
            )
    return "".join(parts)


def _tick_units(ticks: Mapping[str, str], scale: int) -> dict[str, int]:
    """Each tick in units of ``10**-scale`` (the grid a scaled price must divide by)."""
    units: dict[str, int] = {}
    for symbol, tick in ticks.items():
        whole, _, frac = tick.partition(".")
        frac = frac.rstrip("0")
        units[symbol] = int(whole + frac.ljust(scale, "0")) if scale else int(whole)
    return units


def _valid_times(unique: Sequence[str]) -> array[int] | None:
    """Day ordinals of each time, or ``None`` if any date or time of day is impossible."""
    ordinals: dict[str, int] = {}
    for day in {time[:10] for time in unique}:
        try:
            ordinals[day] = date.fromisoformat(day).toordinal()
        except ValueError:
            return None
    for clock in {time[11:19] for time in unique}:
        if clock[:2] > "23" or clock[3:5] > "59" or clock[6:8] > "59":
            return None
    return array("q", map(ordinals.__getitem__, (time[:10] for time in unique)))


def _fast(text: str, data: bytes, units: Mapping[str, int], scale: int) -> Tape | None:
    """The tape if ``text`` is canonical and valid, else ``None`` (the slow path explains)."""
    if not _canonical_pattern(scale).fullmatch(text):
        return None
    symbols = sorted(units)
    width = len(symbols)
    flat = text[len(HEADER) + 1 : -1].replace("\n", ",").split(",")
    rows = len(flat) // _FIELDS
    if rows % width or flat[1::_FIELDS] != symbols * (rows // width):
        return None
    times = flat[0::_FIELDS]
    unique = times[0::width]
    if any(times[offset::width] != unique for offset in range(1, width)):
        return None
    if not all(map(operator.lt, unique, islice(unique, 1, None))):
        return None
    days = _valid_times(unique)
    if days is None:
        return None

    def prices(field: int) -> array[int]:
        joined = ",".join(flat[field::_FIELDS])
        return array("q", map(int, (joined.replace(".", "") if scale else joined).split(",")))

    opens, highs, lows, closes = (prices(field) for field in (2, 3, 4, 5))
    volume_texts = flat[6::_FIELDS]
    places = 0
    try:
        volumes = array("q", map(int, volume_texts))
    except ValueError:  # a fractional volume (the pattern admits nothing else)
        places = tape_places(volume_texts)
        scaled = [scaled_volume(text, places) for text in volume_texts]
        if max(scaled) >= _SCALED_LIMIT:
            return None
        volumes = array("q", scaled)
    columns: dict[str, SymbolColumns] = {}
    for offset, symbol in enumerate(symbols):
        col = SymbolColumns(
            open=opens[offset::width],
            high=highs[offset::width],
            low=lows[offset::width],
            close=closes[offset::width],
            volume=volumes[offset::width],
        )
        if min(col.low) <= 0:
            return None
        for side in (col.open, col.close):
            if not all(map(operator.le, col.low, side)) or not all(
                map(operator.ge, col.high, side)
            ):
                return None
        unit = units[symbol]
        if unit > 1 and any(
            any(map(operator.mod, values, repeat(unit)))
            for values in (col.open, col.high, col.low, col.close)
        ):
            return None
        columns[symbol] = col
    return Tape(
        symbols=tuple(symbols),
        times=tuple(unique),
        days=days,
        scale=scale,
        columns=MappingProxyType(columns),
        root=root_of_bytes(data),
        volume_scale=places,
    )


def _scaled(text: str, scale: int) -> int | None:
    """A decimal price as an integer in ``10**-scale`` units; ``None`` if it needs more."""
    match = _PRICE.fullmatch(text)
    if not match:
        return None
    whole, frac = match.group(1), (match.group(2) or "")
    frac = frac.rstrip("0")
    if len(frac) > scale:
        return None
    return int(whole + frac.ljust(scale, "0")) if scale else int(whole)


@dataclass(slots=True)
class _Row:
    line: int
    time: str
    symbol: str
    values: tuple[int, int, int, int] | None  # open, high, low, close; None when faulty
    volume: str = "0"  # canonical text


class _Faults(Exception):
    """Raised to stop once ``limit`` problems are collected."""


def _slow(text: str, units: Mapping[str, int], scale: int, limit: int) -> str | list[TapeProblem]:
    problems: list[TapeProblem] = []

    def fault(line: int | None, reason: str) -> None:
        problems.append(TapeProblem(line, reason))
        if len(problems) >= limit:
            raise _Faults

    try:
        rows = _rows(text, units, scale, fault)
        _structure(rows, units, fault)
        _volume_scale(rows, fault)
    except _Faults:
        return problems
    if problems:
        return problems
    return _canonical_text(rows, scale)


def _rows(text: str, units: Mapping[str, int], scale: int, fault: _FaultFn) -> list[_Row]:
    lines = text.removeprefix("\ufeff").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    lines = [line.removesuffix("\r") for line in lines]
    if not lines or lines[0] != HEADER:
        # the line found is not quoted: a file that is no tape is not echoed
        fault(1, f"the header must be exactly {HEADER!r}")
        return []
    if len(lines) == 1:
        fault(None, "the tape has no bars")
    rows: list[_Row] = []
    for number, line in enumerate(lines[1:], start=2):
        row = _row(number, line, units, scale, fault)
        if row is not None:
            rows.append(row)
    return rows


def _row(
    number: int, line: str, units: Mapping[str, int], scale: int, fault: _FaultFn
) -> _Row | None:
    if not line.strip():
        fault(number, "empty line")
        return None
    fields = line.split(",")
    if len(fields) != _FIELDS:
        fault(number, f"expected {_FIELDS} fields ({HEADER}), found {len(fields)}")
        return None
    time, symbol, *price_texts, volume_text = fields
    bad = False
    stamp = _TIME.fullmatch(time)
    if stamp is None or _valid_times([time]) is None:
        fault(number, f"time {time!r} is not an ISO-8601 UTC time like 2024-03-01T15:30:00Z")
        return None
    if not _SYMBOL.fullmatch(symbol) or symbol not in units:
        known = ", ".join(sorted(units))
        fault(number, f"unknown symbol {symbol!r} (the instruments are {known})")
        return None
    unit = units[symbol]
    values: list[int] = []
    for name, price_text in zip(("open", "high", "low", "close"), price_texts, strict=True):
        value = _scaled(price_text, scale)
        if value is None and _PRICE.fullmatch(price_text):
            fault(number, f"{name} {price_text} of {symbol} is not on its tick grid")
            bad = True
        elif value is None:
            fault(number, f"{name} {price_text!r} is not a decimal price like 101.25")
            bad = True
        elif len(str(value)) > _MAX_DIGITS:
            fault(number, f"{name} {price_text} is too large")
            bad = True
        elif value <= 0:
            fault(number, f"{name} {price_text} must be greater than 0")
            bad = True
        elif value % unit:
            tick = _unit_text(unit, scale)
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
    return _Row(number, time, symbol, (open_, high, low, close), volume)


def _structure(rows: list[_Row], units: Mapping[str, int], fault: _FaultFn) -> None:
    """Rows sorted by time, exactly one bar per instrument at every time."""
    expected = set(units)
    previous: str | None = None
    index = 0
    while index < len(rows):
        first = rows[index]
        group = [first]
        index += 1
        while index < len(rows) and rows[index].time == first.time:
            group.append(rows[index])
            index += 1
        if previous is not None and first.time <= previous:
            fault(
                first.line,
                f"time {first.time} is not after the previous time {previous} "
                "(rows must be sorted by time)",
            )
        previous = max(previous or first.time, first.time)
        seen: set[str] = set()
        for row in group:
            if row.symbol in seen:
                fault(row.line, f"a second bar for {row.symbol} at {row.time}")
            seen.add(row.symbol)
        for symbol in sorted(expected - seen):
            fault(first.line, f"no bar for {symbol} at {first.time} (every symbol needs one)")


def _volume_scale(rows: list[_Row], fault: _FaultFn) -> None:
    """Every volume fits the tape's scaled integers (its places are the tape's most)."""
    places = tape_places(row.volume for row in rows)
    for row in rows:
        reason = volume_scale_fault(row.volume, places)
        if reason is not None:
            fault(row.line, f"volume {row.volume} {reason}")


def _canonical_text(rows: list[_Row], scale: int) -> str:
    parts = [HEADER, "\n"]
    ordered = sorted(rows, key=lambda row: (row.time, row.symbol))
    for row in ordered:
        assert row.values is not None
        prices = ",".join(_unit_text(value, scale) for value in row.values)
        parts.append(f"{row.time},{row.symbol},{prices},{row.volume}\n")
    return "".join(parts)


def _unit_text(value: int, scale: int) -> str:
    whole, frac = divmod(value, 10**scale)
    return f"{whole}.{frac:0{scale}d}" if scale else str(whole)
