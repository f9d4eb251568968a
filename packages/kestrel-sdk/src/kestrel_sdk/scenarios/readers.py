"""Reading bar files into rows of text, as they are consumed: CSV always, Parquet where
pyarrow or polars is.

Rows are numbered as a user counts them in a spreadsheet: the header is row 1, the
first bar row 2 (for a CSV, its line number; a Parquet file is numbered as its CSV).
Nothing holds the whole file: a CSV is read a line at a time, a Parquet file a batch of
rows at a time. A file that turns out unreadable part-way (not UTF-8, not CSV, a damaged
Parquet page) is reported as that one problem, as if found before any row.
"""

from __future__ import annotations

import codecs
import csv
import re
from collections.abc import Iterable, Iterator, Sequence
from itertools import chain, islice
from pathlib import Path
from typing import Any

from .layouts import RawBar, RawBars, raw_bars
from .parquet import parquet_table
from .problems import ImportProblem, Problems

__all__ = ["read_bars"]

_PARQUET = (".parquet", ".pq")
_PAIR = re.compile(r"\('(.*)', '(.*)'\)")

_Records = Iterator[tuple[int, list[str]]]


class _Unreadable(Exception):
    """The file cannot be read on (the reason is the one problem reported)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def read_bars(path: Path) -> RawBars:
    """The rows of a CSV or Parquet bar file, by recognised layout."""
    try:
        if path.suffix.lower() in _PARQUET:
            return _parquet(path)
        return _csv(path)
    except _Unreadable as error:
        return _unreadable(error.reason)


def _unreadable(reason: str) -> RawBars:
    problems = Problems([ImportProblem(None, reason)])
    return RawBars("unreadable", iter(()), problems, [], named=False)


def _text_lines(path: Path) -> Iterator[str]:
    """The file's lines as ``str.splitlines`` gives them (the first without a BOM)."""
    read = 0  # bytes after any BOM, as a whole-file decode counts them
    try:
        with path.open("rb") as file:
            for number, line in enumerate(file):
                data = line.removeprefix(codecs.BOM_UTF8) if number == 0 else line
                try:
                    text = data.decode("utf-8")
                except UnicodeDecodeError as error:
                    raise _Unreadable(f"not UTF-8 text (byte {read + error.start})") from None
                read += len(data)
                yield from text.splitlines()  # a line of the file ends with "\n"; others too
    except OSError as error:
        raise _Unreadable(f"cannot read the file: {error.strerror or error}") from None


def _csv_records(reader: Any) -> _Records:  # Any: the csv module's reader type is private
    while True:
        try:
            cells = next(reader)
        except StopIteration:
            return
        except csv.Error as error:
            raise _Unreadable(f"line {reader.line_num}: not CSV: {error}") from None
        yield reader.line_num, cells


def _csv(path: Path) -> RawBars:
    lines = _text_lines(path)
    first = next(lines, None)
    if first is None or not first.strip():
        for _ in lines:  # not UTF-8 text is the first thing to say
            pass
        raise _Unreadable("the file is empty (no header row)")
    delimiter = ","
    if "," not in first:
        delimiter = next((mark for mark in ";\t" if mark in first), ",")
    reader = csv.reader(chain([first], lines), delimiter=delimiter)
    numbered = _csv_records(reader)
    header = next(numbered, (1, []))[1]
    return _from_records(header, numbered)


def _records(numbered: _Records, blank: Problems) -> _Records:
    """The rows that hold something; a blank line before a later row is a problem (at
    the end of a file it is not: a damaged file is blank in the middle)."""
    waiting: list[int] = []
    for row, cells in numbered:
        if not "".join(cells).strip():
            waiting.append(row)
            continue
        blank.extend(ImportProblem(number, "empty line") for number in waiting)
        waiting.clear()
        yield row, cells


def _from_records(header: Sequence[str], numbered: _Records) -> RawBars:
    """The layout of a header and its rows; yfinance's ``Price``/``Ticker`` header too."""
    blank = Problems()
    records = _records(numbered, blank)
    first = header[0].strip().lower() if header else ""
    head = list(islice(records, 2)) if first == "price" else []
    if head and head[0][1][:1] and head[0][1][0].strip() == "Ticker":
        symbols = head[0][1]
        rest = head[1:]
        if (
            rest
            and rest[0][1][:1]
            and rest[0][1][0].strip().lower() in ("date", "datetime")
            and not any(cell.strip() for cell in rest[0][1][1:])
        ):
            rest = []
        found = raw_bars(header, chain(rest, records), symbols=symbols)
    else:
        rows = chain(head, records)
        found = _pandas_pairs(header, rows) or raw_bars(header, rows)
    bars = _finished(found, blank)
    return RawBars(found.layout, bars, found.problems, found.notes, named=found.named)


def _finished(found: RawBars, blank: Problems) -> Iterator[RawBar]:
    """``found.bars``; then the file-wide problems, or the one that stopped the reading."""
    any_bar = False
    try:
        for bar in found.bars:
            any_bar = True
            yield bar
    except _Unreadable as error:
        found.problems.clear()
        found.problems.append(ImportProblem(None, error.reason))
        return
    if not any_bar and not found.problems:
        found.problems.append(ImportProblem(None, "the file has a header but no bars"))
    found.problems.extend(blank)


def _pandas_pairs(
    header: Sequence[str], records: Iterable[tuple[int, list[str]]]
) -> RawBars | None:
    """yfinance's ``(Price, Ticker)`` columns as pandas writes them to Parquet, each named
    ``('Close', 'AAPL')``, with the time index a column of its own (pandas puts it last)."""
    pairs = [_PAIR.fullmatch(name.strip()) for name in header]
    priced = [index for index, pair in enumerate(pairs) if pair and pair.group(2)]
    times = [index for index in range(len(header)) if index not in priced]
    if not priced or len(times) != 1:
        return None
    order = times + priced
    names = ["Date"] + [pair.group(1) for pair in map(pairs.__getitem__, priced) if pair]
    symbols = ["Ticker"] + [pair.group(2) for pair in map(pairs.__getitem__, priced) if pair]
    reordered = (
        (row, [cells[index] for index in order] if len(cells) == len(header) else cells)
        for row, cells in records
    )
    return raw_bars(names, reordered, symbols=symbols)


def _parquet_records(rows: Iterator[list[str]]) -> _Records:
    number = 1  # numbered as its CSV: the header is row 1
    while True:
        try:
            cells = next(rows)
        except StopIteration:
            return
        except Exception as error:  # the reader's own error types vary by library
            raise _Unreadable(f"cannot read the Parquet file: {error}") from None
        number += 1
        yield number, cells


def _parquet(path: Path) -> RawBars:
    try:
        with path.open("rb"):
            pass
    except OSError as error:
        raise _Unreadable(f"cannot read the file: {error.strerror or error}") from None
    try:
        names, rows = parquet_table(path)
    except ImportError:
        raise _Unreadable(
            "reading Parquet needs pyarrow or polars: pip install pyarrow "
            "(or polars); or save it as CSV"
        ) from None
    except Exception as error:  # the reader's own error types vary by library
        raise _Unreadable(f"cannot read the Parquet file: {error}") from None
    return _from_records(names, _parquet_records(rows))
