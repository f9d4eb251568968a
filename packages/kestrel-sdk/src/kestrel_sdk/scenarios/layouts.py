"""Which column is which: the bar layouts people already have, recognised by header.

Recognised (column names compared case-insensitively; other columns are ignored):

* Yahoo Finance: ``Date,Open,High,Low,Close,Adj Close,Volume`` (``Close`` is used, not
  ``Adj Close``), also yfinance's three-row header (``Price`` / ``Ticker`` / ``Date``).
* backtesting.py: ``Open,High,Low,Close,Volume`` with a datetime index (in a CSV, the
  first column with an empty header).
* Alpaca and Polygon exports: lower-case ``timestamp,open,high,low,close,volume`` (or the
  one-letter ``t,o,h,l,c,v``; Polygon flat files' ``window_start`` in epoch nanoseconds).
* Long format: any of the above plus a ``symbol`` (or ``ticker``) column, one row per
  symbol and time.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

from .problems import ImportProblem, Problems

__all__ = ["FIELDS", "RawBar", "RawBars", "raw_bars"]

FIELDS = ("time", "open", "high", "low", "close", "volume")
"""The columns every file needs (``symbol`` is optional: one-symbol files need none)."""

_LABELS = {
    "time": "Date",
    "open": "Open",
    "high": "High",
    "low": "Low",
    "close": "Close",
    "volume": "Volume",
    "symbol": "symbol",
}
_ALIASES: dict[str, tuple[str, ...]] = {
    "time": (
        "date",
        "datetime",
        "timestamp",
        "time",
        "t",
        "window_start",
        "index",
        "",
        "unnamed: 0",
        "__index_level_0__",
    ),
    "symbol": ("symbol", "ticker", "sym"),
    "open": ("open", "o"),
    "high": ("high", "h"),
    "low": ("low", "l"),
    "close": ("close", "c"),
    "volume": ("volume", "v", "vol"),
}
_FIELD_OF = {alias: field for field, aliases in _ALIASES.items() for alias in aliases}


@dataclass(frozen=True, slots=True)
class RawBar:
    """One input row as text, before any check (``row`` as the user would count it)."""

    row: int
    time: str
    symbol: str | None
    open: str
    high: str
    low: str
    close: str
    volume: str


@dataclass(frozen=True, slots=True)
class RawBars:
    """The rows of a recognised layout, or the problems that stop recognising it.

    ``bars`` is read once, as the file is: a fault met on the way (a row of the wrong
    width, a blank line) is added to ``problems`` (the first kept, all counted), which is
    complete once ``bars`` is exhausted. ``named``: the rows carry their symbol.
    """

    layout: str
    bars: Iterator[RawBar]
    problems: Problems
    notes: list[str]
    named: bool


def _drained(records: Iterable[object]) -> Iterator[RawBar]:
    """No bars, once ``records`` is read (whose reading may find problems of its own)."""
    for _ in records:
        pass
    yield from ()


def _layout_name(header: Sequence[str], columns: dict[str, int]) -> str:
    names = [name.strip() for name in header]
    lowered = [name.lower() for name in names]
    long = ", long format" if "symbol" in columns else ""
    if "adj close" in lowered:
        return "Yahoo Finance" + long
    time_name = names[columns["time"]].lower()
    if time_name in ("", "index", "unnamed: 0", "__index_level_0__"):
        return "backtesting.py" + long
    if all(names[columns[field]].islower() for field in FIELDS):
        return "Alpaca/Polygon lower-case" + long
    return "OHLCV" + long


def _columns(header: Sequence[str], header_row: int | None) -> tuple[dict[str, int], Problems]:
    columns: dict[str, int] = {}
    problems = Problems()
    for index, name in enumerate(header):
        field = _FIELD_OF.get(name.strip().lower())
        if field is None:
            continue
        if field in columns:
            first = header[columns[field]].strip() or "(unnamed)"
            problems.append(
                ImportProblem(
                    header_row,
                    f"columns {first!r} and {name.strip() or '(unnamed)'!r} both look like "
                    f"the {_LABELS[field]} column; keep one",
                )
            )
            continue
        columns[field] = index
    found = ", ".join(repr(name.strip()) for name in header)
    for field in FIELDS:
        if field not in columns:
            problems.append(
                ImportProblem(header_row, f"missing column {_LABELS[field]} (found {found})")
            )
    return columns, problems


def raw_bars(
    header: Sequence[str],
    records: Iterable[tuple[int, Sequence[str]]],
    *,
    header_row: int | None = 1,
    symbols: Sequence[str] | None = None,
) -> RawBars:
    """The rows of ``records`` (``(row, cells)``, read as ``bars`` is) under ``header``,
    by recognised layout.

    ``symbols`` (yfinance's wide header) names a symbol per column; the cells of each
    symbol become rows of their own, in long format.
    """
    if symbols is not None:
        return _wide(header, records, header_row, symbols)
    columns, problems = _columns(header, header_row)
    if problems:
        return RawBars("unrecognised", _drained(records), problems, [], named=False)
    notes = []
    if any(name.strip().lower() == "adj close" for name in header):
        notes.append("Adj Close is not used: the tape holds the traded Open/High/Low/Close")
    bars = _bars(records, columns, len(header), problems)
    layout = _layout_name(header, columns)
    return RawBars(layout, bars, problems, notes, named="symbol" in columns)


def _bars(
    records: Iterable[tuple[int, Sequence[str]]],
    columns: dict[str, int],
    width: int,
    problems: Problems,
) -> Iterator[RawBar]:
    symbol_at = columns.get("symbol")
    time, open_, high, low, close, volume = (columns[field] for field in FIELDS)
    for row, cells in records:
        if len(cells) != width:
            problems.append(
                ImportProblem(row, f"expected {width} fields like the header, found {len(cells)}")
            )
            continue
        yield RawBar(
            row,
            cells[time].strip(),
            cells[symbol_at].strip() if symbol_at is not None else None,
            cells[open_].strip(),
            cells[high].strip(),
            cells[low].strip(),
            cells[close].strip(),
            cells[volume].strip(),
        )


def _wide(
    header: Sequence[str],
    records: Iterable[tuple[int, Sequence[str]]],
    header_row: int | None,
    symbols: Sequence[str],
) -> RawBars:
    """yfinance's ``Price,Close,…`` / ``Ticker,AAPL,…`` / ``Date,,…`` header, any tickers."""
    tickers = sorted({symbol.strip() for symbol in symbols[1:] if symbol.strip()})
    problems = Problems()
    per_ticker: dict[str, dict[str, int]] = {}
    for ticker in tickers:
        sub_header = ["Date"] + [
            name if symbols[index].strip() == ticker else "-"
            for index, name in enumerate(header)
            if index > 0
        ]
        columns, found = _columns(sub_header, header_row)
        problems.extend(ImportProblem(p.row, f"{ticker}: {p.reason}") for p in found)
        per_ticker[ticker] = columns
    if problems or not tickers:
        if not tickers:
            row = None if header_row is None else header_row + 1
            problems.append(ImportProblem(row, "the Ticker row names no ticker"))
        return RawBars("unrecognised", _drained(records), problems, [], named=False)
    bars = _wide_bars(records, tickers, per_ticker, len(header), problems)
    return RawBars("yfinance three-row header", bars, problems, [], named=True)


def _wide_bars(
    records: Iterable[tuple[int, Sequence[str]]],
    tickers: Sequence[str],
    per_ticker: dict[str, dict[str, int]],
    width: int,
    problems: Problems,
) -> Iterator[RawBar]:
    for row, cells in records:
        if len(cells) != width:
            problems.append(
                ImportProblem(row, f"expected {width} fields like the header, found {len(cells)}")
            )
            continue
        for ticker in tickers:
            columns = per_ticker[ticker]
            yield (
                RawBar(
                    row=row,
                    time=cells[0].strip(),
                    symbol=ticker,
                    open=cells[columns["open"]].strip(),
                    high=cells[columns["high"]].strip(),
                    low=cells[columns["low"]].strip(),
                    close=cells[columns["close"]].strip(),
                    volume=cells[columns["volume"]].strip(),
                )
            )
