"""Canonical tape bytes, a block at a time: checked column-wise into compact columns.

This is how a tape is read when its text is already canonical (every shipped tape, every
tape ``kestrel scenario new`` writes): each block of whole lines is matched against the
canonical form with one regular expression and checked with C-speed builtins over its
columns, its bars go into ``array('q')`` columns, and its bytes into the root. What is
held between blocks is the columns made so far (or, when only the shape is wanted, the
first and last time), never the text. Any block that is not canonical and valid stops
the reading (``add`` is false): ``tape_rows`` then says why, or makes the text canonical
and feeds it here.
"""

from __future__ import annotations

import operator
import re
from array import array
from collections.abc import Mapping
from itertools import islice, repeat
from types import MappingProxyType

from kestrel_protocol import RootOfBytes

from .model import SymbolColumns, Tape
from .tape_format import FIELDS, HEADER, TIME_FORM, TapeShape, day_ordinals
from .volumes import MAX_PLACES, MAX_SCALED_DIGITS, MAX_WHOLE_DIGITS, scaled_volume, tape_places

__all__ = ["CanonicalColumns"]

_HEAD = HEADER + "\n"
_VOLUME = rf"(?:0|[1-9][0-9]{{0,{MAX_WHOLE_DIGITS - 1}}})(?:\.[0-9]{{0,{MAX_PLACES - 1}}}[1-9])?"
_SCALED_LIMIT = 10**MAX_SCALED_DIGITS
_PATTERNS: dict[int, re.Pattern[str]] = {}
_COLUMNS = ("open", "high", "low", "close", "volume")


def _rows_pattern(scale: int) -> re.Pattern[str]:
    """One or more canonical rows (each ending with LF) of prices with ``scale`` places."""
    pattern = _PATTERNS.get(scale)
    if pattern is None:
        price = r"(?:0|[1-9][0-9]{0,11})" + (rf"\.[0-9]{{{scale}}}" if scale else "")
        row = (
            rf"{TIME_FORM},[A-Z][A-Z0-9.]{{0,11}},"
            rf"{price},{price},{price},{price},{_VOLUME}\n"
        )
        pattern = re.compile(r"(?:" + row + ")+")
        _PATTERNS[scale] = pattern
    return pattern


class CanonicalColumns:
    """Reads a canonical tape's bytes block by block (``add``), then ``tape`` or ``shape``.

    ``keep=False`` checks every bar but keeps no columns (a listing needs the shape only).
    Blocks are the tape's bytes in order, cut anywhere between lines (the first holds the
    header line whole).
    """

    def __init__(self, units: Mapping[str, int], scale: int, *, keep: bool) -> None:
        self._units = dict(units)
        self._symbols = sorted(units)
        self._scale = scale
        self._keep = keep
        self._pattern = _rows_pattern(scale)
        self._root = RootOfBytes()
        self._carry = ""  # lines of a time whose bars are not all read yet
        self._started = False
        self._bars = 0
        self._first = ""
        self._last = ""
        self._times: list[str] = []
        self._days = array("q")
        self._places = 0  # the most decimal places of a volume so far
        self._top = 0  # the largest volume so far, in units of 10**-places
        self._columns = {
            symbol: {name: array("q") for name in _COLUMNS} for symbol in self._symbols
        }

    def add(self, block: bytes) -> bool:
        """Read the next block; false when the tape is not canonical or not valid."""
        self._root.update(block)
        try:
            text = self._carry + block.decode("utf-8")
        except UnicodeDecodeError:
            return False
        if not self._started:
            if not text.startswith(_HEAD):
                return False
            self._started = True
            text = text[len(_HEAD) :]
        cut = self._whole_times(text)
        self._carry = text[cut:]
        return cut == 0 or self._rows(text[:cut])

    def tape(self) -> Tape | None:
        """The tape read (``keep=True``), or ``None`` when it is incomplete."""
        if not self._complete():
            return None
        columns = {symbol: SymbolColumns(**arrays) for symbol, arrays in self._columns.items()}
        return Tape(
            symbols=tuple(self._symbols),
            times=tuple(self._times),
            days=self._days,
            scale=self._scale,
            columns=MappingProxyType(columns),
            root=self._root.root(),
            volume_scale=self._places,
        )

    def shape(self) -> TapeShape | None:
        """The shape of the tape read, or ``None`` when it is incomplete."""
        if not self._complete():
            return None
        return TapeShape(bars=self._bars, start=self._first, end=self._last, root=self._root.root())

    def _complete(self) -> bool:
        return self._started and self._bars > 0 and not self._carry

    def _whole_times(self, text: str) -> int:
        """Where the last whole time's last line ends in ``text`` (a row per symbol each)."""
        cut = text.rfind("\n") + 1
        extra = text.count("\n", 0, cut) % len(self._symbols)
        for _ in range(extra):
            cut = text.rfind("\n", 0, cut - 1) + 1
        return cut

    def _rows(self, text: str) -> bool:
        """Check whole times of canonical rows and keep their bars."""
        if not self._pattern.fullmatch(text):
            return False
        symbols = self._symbols
        width = len(symbols)
        flat = text[:-1].replace("\n", ",").split(",")
        rows = len(flat) // FIELDS
        if flat[1::FIELDS] != symbols * (rows // width):
            return False
        times = flat[0::FIELDS]
        unique = times[0::width]
        if any(times[offset::width] != unique for offset in range(1, width)):
            return False
        if self._last >= unique[0] or not all(map(operator.lt, unique, islice(unique, 1, None))):
            return False
        days = day_ordinals(unique)
        if days is None:
            return False
        prices = [self._prices(flat, field) for field in (2, 3, 4, 5)]
        volumes = self._volumes(flat[6::FIELDS])
        if volumes is None:
            return False
        for offset, symbol in enumerate(symbols):
            opens, highs, lows, closes = (column[offset::width] for column in prices)
            if not self._bars_valid(symbol, opens, highs, lows, closes):
                return False
            if self._keep:
                kept = self._columns[symbol]
                for name, values in zip(
                    _COLUMNS, (opens, highs, lows, closes, volumes[offset::width]), strict=True
                ):
                    kept[name].extend(values)
        if self._keep:
            self._times.extend(unique)
            self._days.extend(days)
        self._first = self._first or unique[0]
        self._last = unique[-1]
        self._bars += len(unique)
        return True

    def _prices(self, flat: list[str], field: int) -> array[int]:
        joined = ",".join(flat[field::FIELDS])
        return array("q", map(int, (joined.replace(".", "") if self._scale else joined).split(",")))

    def _bars_valid(
        self,
        symbol: str,
        opens: array[int],
        highs: array[int],
        lows: array[int],
        closes: array[int],
    ) -> bool:
        """Prices above 0, ``low <= open, close <= high``, and on the symbol's tick grid."""
        if min(lows) <= 0:
            return False
        for side in (opens, closes):
            if not all(map(operator.le, lows, side)) or not all(map(operator.ge, highs, side)):
                return False
        unit = self._units[symbol]
        return unit == 1 or not any(
            any(map(operator.mod, values, repeat(unit))) for values in (opens, highs, lows, closes)
        )

    def _volumes(self, texts: list[str]) -> array[int] | None:
        """The volumes in units of ``10**-places`` for the most places read so far (the
        columns kept are scaled up when a block has more); ``None`` when one is too large."""
        try:
            whole = array("q", map(int, texts))
        except ValueError:  # a fractional volume (the pattern admits nothing else)
            places = tape_places(texts)
        else:
            places = 0
        if places > self._places and not self._rescale(places):
            return None
        if places:
            scaled = [scaled_volume(text, self._places) for text in texts]
            top = max(scaled)
        else:
            top = max(whole) * 10**self._places
        if top >= _SCALED_LIMIT:
            return None
        self._top = max(self._top, top)
        if places:
            return array("q", scaled)
        if self._places:
            return array("q", map(operator.mul, whole, repeat(10**self._places)))
        return whole

    def _rescale(self, places: int) -> bool:
        """Volumes kept so far in units of ``10**-places`` (more places than before);
        false when one of them is then too large."""
        factor = 10 ** (places - self._places)
        self._places = places
        self._top *= factor
        if self._top >= _SCALED_LIMIT:
            return False
        for arrays in self._columns.values():
            kept = arrays["volume"]
            arrays["volume"] = array("q", map(operator.mul, kept, repeat(factor)))
        return True
