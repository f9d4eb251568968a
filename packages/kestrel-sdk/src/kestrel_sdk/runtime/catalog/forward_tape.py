"""A forward scenario's tape: its declared prefix (possibly empty) and the tape it grows
into as bars are appended, read by the tape readers of :mod:`.tapes` (never a second
parser), and the chain of prefix roots that commits every prefix of it.

The chain: the declared prefix's root (the root of its canonical bytes; of the
header-only text when it has no bar) is the root of the prefix ending with its last bar;
each appended bar ``k`` extends it, ``prefix_root(k) = root_of({"bar": k, "prev":
prefix_root(k - 1), "rows": <bar k's canonical rows>})``. A frame of a forward session
carries the root of the prefix up to its clock, so its root binds the bars it was shown.
"""

from __future__ import annotations

from array import array
from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from types import MappingProxyType

from kestrel_protocol import root_of, root_of_bytes

from .model import SymbolColumns, Tape
from .tape_columns import CanonicalColumns
from .tape_format import tick_units
from .tapes import HEADER, TapeProblem, TapeShape, check_tape
from .terms import ScenarioTerms

__all__ = [
    "EMPTY_TAPE_TEXT",
    "GrowingTape",
    "bar_epoch",
    "empty_tape",
    "forward_shape",
    "prefix_link",
]

EMPTY_TAPE_TEXT = HEADER + "\n"
"""A tape with no bar: its header alone (the canonical text of an empty prefix)."""


def bar_epoch(time: str) -> int:
    """Seconds since the epoch of a bar's time (``2024-03-01T15:30:00Z``): how far apart
    two bars are, in intervals, on a tape that grows."""
    return int(datetime.fromisoformat(time.replace("Z", "+00:00")).timestamp())


def prefix_link(index: int, prev: str, rows: str) -> str:
    """The root of the prefix ending with bar ``index`` (canonical ``rows``), after
    the prefix whose root is ``prev``."""
    return root_of({"bar": index, "prev": prev, "rows": rows})


def empty_tape(symbols: Sequence[str], scale: int) -> Tape:
    """A tape of no bar (a forward scenario declared without a prefix)."""
    columns = {symbol: SymbolColumns(*(array("q") for _ in range(5))) for symbol in sorted(symbols)}
    return Tape(
        symbols=tuple(sorted(symbols)),
        times=(),
        days=array("q"),
        scale=scale,
        columns=MappingProxyType(columns),
        root=root_of_bytes(EMPTY_TAPE_TEXT.encode("ascii")),
    )


def forward_shape(path: Path, terms: ScenarioTerms, limit: int) -> TapeShape | list[TapeProblem]:
    """The shape of a forward scenario's declared prefix at ``path``: absent or its
    header alone is an empty prefix; else the file is checked as any tape is."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        data = b""
    if data.replace(b"\r\n", b"\n").strip() in (b"", HEADER.encode("ascii")):
        root = root_of_bytes(EMPTY_TAPE_TEXT.encode("ascii"))
        return TapeShape(bars=0, start="", end="", root=root)
    return check_tape(path, terms.ticks, terms.scale, limit=limit)


class GrowingTape:
    """The tape of a declared prefix (its canonical text) followed by the published
    bars' canonical rows, read once by the canonical tape reader (:mod:`.tape_columns`,
    which reads a tape a block at a time): each :meth:`extend` reads only its bars (and
    checks they come after the last), :meth:`tape` is what was read so far. Every bar
    was validated when it was appended."""

    def __init__(self, prefix_text: str, ticks: Mapping[str, str], scale: int) -> None:
        self._symbols = list(ticks)
        self._scale = scale
        self._reader = CanonicalColumns(tick_units(ticks, scale), scale, keep=True)
        self._read(prefix_text)

    def extend(self, rows: Sequence[str]) -> None:
        """Read the next published bars (their canonical rows, in order)."""
        self._read("".join(rows))

    def tape(self) -> Tape:
        """The tape read so far; its columns are its own (a tape's columns never change
        once loaded: the reader's grow on)."""
        read = self._reader.tape()
        if read is None:  # the empty prefix alone
            return empty_tape(self._symbols, self._scale)
        columns = {
            symbol: SymbolColumns(
                held.open[:], held.high[:], held.low[:], held.close[:], held.volume[:]
            )
            for symbol, held in read.columns.items()
        }
        return replace(read, days=read.days[:], columns=MappingProxyType(columns))

    def root(self) -> str:
        """The tape root of the tape read so far (of its canonical text, as any tape's)."""
        shape = self._reader.shape()
        assert shape is not None  # pragma: no cover - bars were read whole
        return shape.root

    def _read(self, text: str) -> None:
        if not self._reader.add(text.encode("utf-8")):  # pragma: no cover - validated first
            raise ValueError("a published bar does not read as the tape's next bar")
