"""Tape CSV: reading a tape, checked, into its canonical bytes' root and compact columns.

A tape is read as a stream, a block of lines at a time, so reading one costs its columns
(or, for its shape alone, nothing that grows with it), never its text. Two readers share
one set of rules (``tape_format``). The first, ``tape_columns``, accepts only text already
in canonical form and checks it column-wise with C-speed builtins, so the 200,000-bar
shipped tape parses well under a second. Anything else (CRLF, a BOM, ``101.5`` for
``101.50``, a fault) is read again by the second, ``tape_rows``, which walks the rows one
by one, names the line of every fault, and otherwise writes the text in canonical form,
which the first then reads. The tape root is the root of the canonical bytes, so two
spellings of the same bars share a root.

Canonical form: UTF-8, LF line ends, the header ``time,symbol,open,high,low,close,volume``,
one row per (time, symbol), times ascending and, within a time, symbols in code-point
order; prices with exactly ``scale`` decimals and no leading zeros; volumes as
non-negative decimals in their canonical text (:mod:`.volumes`: ``120000``,
``2012.25343589``; no leading zeros, no trailing zeros after the point); a final LF.
"""

from __future__ import annotations

import gzip
import io
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from importlib.resources.abc import Traversable

from kestrel_protocol import root_of_bytes

from .model import Tape
from .tape_columns import CanonicalColumns
from .tape_format import HEADER, TIME, TapeProblem, TapeShape, tick_units
from .tape_rows import TapeRows

__all__ = [
    "HEADER",
    "TapeProblem",
    "TapeShape",
    "TapeSource",
    "check_tape",
    "parse_tape",
    "render_tape",
    "shape_of_canonical",
]

TapeSource = bytes | Traversable
"""A tape's bytes, or its file (a ``Path``, a package resource; ``.gz`` is decompressed)."""

_Read = Callable[[int], bytes]
_BLOCK = 1 << 16  # bytes read at a time
_LONGEST_LINE = 1 << 20  # bytes of a line, at most: a tape's is ~100 (one of GBs is a bomb)
_ROWS = 8192  # rows rendered, or normalised, at a time


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
    if not TIME.fullmatch(start) or not TIME.fullmatch(end):
        return None
    return TapeShape(bars=rows // symbol_count, start=start, end=end, root=root_of_bytes(data))


def parse_tape(
    source: TapeSource, ticks: Mapping[str, str], scale: int, *, limit: int = 1
) -> Tape | list[TapeProblem]:
    """The tape, or up to ``limit`` problems (each with its CSV line where known).

    ``ticks`` maps each instrument symbol to its tick (a decimal string); the tape must
    hold exactly those symbols. ``scale`` is the number of decimals prices carry. A file
    that cannot be read raises what reading it raised (``OSError``, ``EOFError``,
    ``zlib.error``).
    """
    found = _read(source, ticks, scale, limit, keep=True)
    if isinstance(found, CanonicalColumns):
        tape = found.tape()
        assert tape is not None
        return tape
    return found


def check_tape(
    source: TapeSource, ticks: Mapping[str, str], scale: int, *, limit: int = 1
) -> TapeShape | list[TapeProblem]:
    """What ``parse_tape`` finds, holding no columns: the tape's shape, or its problems."""
    found = _read(source, ticks, scale, limit, keep=False)
    if isinstance(found, CanonicalColumns):
        shape = found.shape()
        assert shape is not None
        return shape
    return found


def render_tape(tape: Tape) -> str:
    """The canonical CSV text of a tape (its root is ``tape.root``)."""
    price = tape.price_text
    volume = tape.volume_text
    blocks: list[str] = [HEADER, "\n"]
    columns = [(symbol, tape.columns[symbol]) for symbol in tape.symbols]
    for first in range(0, len(tape), _ROWS):
        rows: list[str] = []
        for index in range(first, min(first + _ROWS, len(tape))):
            time = tape.times[index]
            for symbol, col in columns:
                rows.append(
                    f"{time},{symbol},{price(col.open[index])},{price(col.high[index])},"
                    f"{price(col.low[index])},{price(col.close[index])},"
                    f"{volume(col.volume[index])}\n"
                )
        blocks.append("".join(rows))
    return "".join(blocks)


@contextmanager
def _opened(source: TapeSource) -> Iterator[_Read]:
    """The ``read`` of the tape's bytes (decompressed), from the start."""
    if isinstance(source, bytes):
        yield io.BytesIO(source).read
        return
    with source.open("rb") as raw:
        if source.name.endswith(".gz"):
            with gzip.GzipFile(fileobj=raw) as unzipped:
                yield unzipped.read
        else:
            yield raw.read


class _TooLong(Exception):
    """A line longer than :data:`_LONGEST_LINE`: the reading stops there."""


def _blocks(read: _Read) -> Iterator[bytes]:
    """The bytes in blocks of whole lines (the last block may lack its LF); ``_TooLong``
    when a line runs past ``_LONGEST_LINE`` (not held: a gzip of MBs can unpack to GBs)."""
    pending: list[bytes] = []  # a line begun, not ended yet
    waiting = 0  # its bytes
    while chunk := read(_BLOCK):
        end = chunk.rfind(b"\n") + 1
        if end:
            yield b"".join([*pending, chunk[:end]])
            pending.clear()
            waiting = 0
        pending.append(chunk[end:])
        waiting += len(chunk) - end
        if waiting > _LONGEST_LINE:
            raise _TooLong
    if any(pending):
        yield b"".join(pending)


class _NotText(Exception):
    def __init__(self, line: int) -> None:
        super().__init__(line)
        self.line = line


def _lines(blocks: Iterator[bytes]) -> Iterator[tuple[int, str]]:
    """Each line (numbered from 1, without its LF; none after a final LF); ``_NotText``
    names the line of the first byte that is not UTF-8."""
    number = 0
    for block in blocks:
        try:
            text = block.decode("utf-8")
        except UnicodeDecodeError as error:
            raise _NotText(number + block.count(b"\n", 0, error.start) + 1) from None
        lines = text.split("\n")
        if text.endswith("\n"):
            lines.pop()
        for line in lines:
            number += 1
            yield number, line


def _read(
    source: TapeSource, ticks: Mapping[str, str], scale: int, limit: int, *, keep: bool
) -> CanonicalColumns | list[TapeProblem]:
    """The columns of a tape read whole, or its problems: read as canonical text first,
    and again a row at a time when it is not (to name its faults or make it canonical)."""
    units = tick_units(ticks, scale)
    try:
        with _opened(source) as stream:
            columns = CanonicalColumns(units, scale, keep=keep)
            if all(map(columns.add, _blocks(stream))) and columns.shape() is not None:
                return columns
        del columns  # before the second reading makes its own
        with _opened(source) as stream:
            return _read_rows(_blocks(stream), units, scale, limit, keep=keep)
    except _TooLong:
        return [TapeProblem(None, f"a line is longer than {_LONGEST_LINE} bytes: not a tape")]


def _read_rows(
    blocks: Iterator[bytes], units: Mapping[str, int], scale: int, limit: int, *, keep: bool
) -> CanonicalColumns | list[TapeProblem]:
    rows = TapeRows(units, scale, limit)
    columns: CanonicalColumns | None = CanonicalColumns(units, scale, keep=keep)
    try:
        for number, line in _lines(blocks):
            if rows.full:
                continue  # read on: a byte that is not UTF-8 is the one problem to tell
            rows.add(number, line)
            if not rows.clean:
                columns = None  # a fault: no tape comes of it
            elif columns is not None and number % _ROWS == 0:
                columns = _fed(columns, rows.take())
    except _NotText as error:
        for _ in blocks:  # read to the end: a file that cannot be read says so first
            pass
        return [TapeProblem(error.line, "not UTF-8 text")]
    problems = rows.finish()
    if problems:
        return problems
    if columns is not None:
        columns = _fed(columns, rows.take())
    if columns is None or columns.shape() is None:  # pragma: no cover
        # tape_rows writes exactly what tape_columns reads
        return [TapeProblem(None, "internal error: normalised tape failed validation")]
    return columns


def _fed(columns: CanonicalColumns, text: str) -> CanonicalColumns | None:
    """``columns`` after reading ``text`` (canonical rows), or ``None`` if it refused them."""
    return columns if columns.add(text.encode("utf-8")) else None
