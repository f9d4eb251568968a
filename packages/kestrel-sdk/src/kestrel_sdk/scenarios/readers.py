"""Reading bar files into rows of text: CSV always, Parquet where pyarrow or polars is.

Rows are numbered as a user counts them in a spreadsheet: the header is row 1, the
first bar row 2 (for a CSV, its line number; a Parquet file is numbered as its CSV).
"""

from __future__ import annotations

import csv
import re
from collections.abc import Sequence
from pathlib import Path

from .layouts import ImportProblem, RawBars, raw_bars
from .parquet import parquet_table

__all__ = ["read_bars"]

_PARQUET = (".parquet", ".pq")
_PAIR = re.compile(r"\('(.*)', '(.*)'\)")


def read_bars(path: Path) -> RawBars:
    """The rows of a CSV or Parquet bar file, by recognised layout."""
    if path.suffix.lower() in _PARQUET:
        return _parquet(path)
    return _csv(path)


def _unreadable(reason: str) -> RawBars:
    return RawBars("unreadable", [], [ImportProblem(None, reason)], [])


def _csv(path: Path) -> RawBars:
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as error:
        return _unreadable(f"not UTF-8 text (byte {error.start})")
    except OSError as error:
        return _unreadable(f"cannot read the file: {error.strerror or error}")
    lines = text.splitlines()
    if not lines or not lines[0].strip():
        return _unreadable("the file is empty (no header row)")
    first = lines[0]
    delimiter = ","
    if "," not in first:
        delimiter = next((mark for mark in ";\t" if mark in first), ",")
    reader = csv.reader(lines, delimiter=delimiter)
    header = next(reader)
    records: list[tuple[int, list[str]]] = []
    blank: list[int] = []
    for cells in reader:
        if not any(cell.strip() for cell in cells):
            blank.append(reader.line_num)
            continue
        records.append((reader.line_num, cells))
    return _from_records(header, records, blank)


def _from_records(
    header: Sequence[str], records: list[tuple[int, list[str]]], blank: Sequence[int]
) -> RawBars:
    """The layout of a header and its rows; yfinance's ``Price``/``Ticker`` header too."""
    first = header[0].strip().lower() if header else ""
    if first == "price" and records and records[0][1][:1] and records[0][1][0].strip() == "Ticker":
        symbols = records[0][1]
        rest = records[1:]
        if (
            rest
            and rest[0][1][:1]
            and rest[0][1][0].strip().lower() in ("date", "datetime")
            and not any(cell.strip() for cell in rest[0][1][1:])
        ):
            rest = rest[1:]
        found = raw_bars(header, rest, symbols=symbols)
    else:
        found = _pandas_pairs(header, records) or raw_bars(header, records)
    if not found.bars and not found.problems:
        found.problems.append(ImportProblem(None, "the file has a header but no bars"))
    # blank lines anywhere but the end are probably a damaged file
    last = records[-1][0] if records else 0
    found.problems.extend(ImportProblem(row, "empty line") for row in blank if row < last)
    return found


def _pandas_pairs(header: Sequence[str], records: list[tuple[int, list[str]]]) -> RawBars | None:
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
    reordered = [
        (row, [cells[index] for index in order] if len(cells) == len(header) else cells)
        for row, cells in records
    ]
    return raw_bars(names, reordered, symbols=symbols)


def _parquet(path: Path) -> RawBars:
    try:
        with path.open("rb"):
            pass
    except OSError as error:
        return _unreadable(f"cannot read the file: {error.strerror or error}")
    try:
        names, rows = parquet_table(path)
    except ImportError:
        return _unreadable(
            "reading Parquet needs pyarrow or polars: pip install pyarrow "
            "(or polars); or save it as CSV"
        )
    except Exception as error:  # the reader's own error types vary by library
        return _unreadable(f"cannot read the Parquet file: {error}")
    records: list[tuple[int, list[str]]] = []
    blank: list[int] = []
    for number, cells in enumerate(rows, start=2):  # numbered as its CSV: the header is row 1
        if any(cell.strip() for cell in cells):
            records.append((number, cells))
        else:
            blank.append(number)
    return _from_records(names, records, blank)
