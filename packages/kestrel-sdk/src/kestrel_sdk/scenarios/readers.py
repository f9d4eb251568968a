"""Reading bar files into rows of text: CSV always, Parquet where pyarrow or polars is.

Rows are numbered as a user counts them in a spreadsheet: the header is row 1, the
first bar row 2 (for a CSV, its line number; a Parquet file is numbered as its CSV).
"""

from __future__ import annotations

import csv
import math
from collections.abc import Iterable, Sequence
from datetime import date, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

from .layouts import ImportProblem, RawBars, raw_bars

__all__ = ["cell_text", "read_bars"]

_PARQUET = (".parquet", ".pq")


def cell_text(value: Any) -> str:
    """A cell of a DataFrame or Parquet table as the text a CSV would hold.

    Floats keep their shortest round-trip form (``104.06``, not ``104.0600000000000023``);
    times their ISO-8601 form with any offset; missing values become ``""``.
    """
    if value is None:
        return ""
    if isinstance(value, float):
        return "" if math.isnan(value) else repr(value)
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, Decimal):
        return f"{value:f}"
    isoformat = getattr(value, "isoformat", None)  # pandas Timestamp, numpy datetime64 wrappers
    if callable(isoformat):
        text = isoformat()
        return "" if text == "NaT" else str(text)
    item = getattr(value, "item", None)  # numpy scalars
    if callable(item):
        return cell_text(item())
    return str(value)


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
        found = raw_bars(header, records)
    if not found.bars and not found.problems:
        found.problems.append(ImportProblem(None, "the file has a header but no bars"))
    # blank lines anywhere but the end are probably a damaged file
    last = records[-1][0] if records else 0
    found.problems.extend(ImportProblem(row, "empty line") for row in blank if row < last)
    return found


def _parquet(path: Path) -> RawBars:
    try:
        rows, names = _parquet_rows(path)
    except ImportError:
        return _unreadable(
            "reading Parquet needs pyarrow or polars (pip install pyarrow); or save it as CSV"
        )
    except Exception as error:  # the reader's own error types vary by library
        return _unreadable(f"cannot read the Parquet file: {error}")
    records = [(number, [cell_text(row.get(name)) for name in names]) for number, row in rows]
    return _from_records(names, records, ())


def _parquet_rows(path: Path) -> tuple[Iterable[tuple[int, dict[str, Any]]], list[str]]:
    """(row number, row as a dict) of a Parquet file, and its column names."""
    try:
        import pyarrow.parquet as pq  # type: ignore[import-not-found]  # noqa: PLC0415

        table = pq.read_table(path)
        names = [str(name) for name in table.column_names]
        return enumerate(table.to_pylist(), start=2), names
    except ImportError:
        import polars as pl  # type: ignore[import-not-found]  # noqa: PLC0415

        frame = pl.read_parquet(path)
        return enumerate(frame.to_dicts(), start=2), [str(name) for name in frame.columns]
