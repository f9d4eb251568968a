"""A ledger and a grade's metrics as columns, then as pandas or polars frames.

Column names and meanings are documented in ``packages/kestrel-sdk/README.md``
(*Notebooks*). Money, prices, ratios and returns become ``float`` (IEEE 754 double, the
nearest to the exact decimal or fraction): good for plots and statistics, not for
re-deriving roots, which the grade's decimal strings are for (``metrics.exact``).
Quantities and bars stay integers; times are timezone-aware UTC datetimes.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Generic, TypeVar

from kestrel_protocol import GradeResult

from .ledger import Ledger

__all__ = ["Frames", "frame_columns", "to_pandas", "to_polars"]

F = TypeVar("F")
Columns = dict[str, list[Any]]


@dataclass(frozen=True, slots=True)
class Frames(Generic[F]):
    """A graded session as frames: ``equity`` (a row per bar), ``fills`` (a row per
    execution), ``trades`` (a row per round trip) and ``metrics`` (a row per metric)."""

    equity: F
    fills: F
    trades: F
    metrics: F


def _metric_columns(grade: GradeResult) -> Columns:
    found = grade.metrics.to_json()
    names = list(found)
    exact = [None if found[n] is None else str(found[n]) for n in names]
    return {
        "metric": names,
        "value": [None if e is None else float(e) for e in exact],
        "exact": exact,
    }


def frame_columns(grade: GradeResult, ledger: Ledger) -> dict[str, Columns]:
    """The four tables of :class:`Frames` as plain columns (name → Python values)."""
    eq, fills, trades = ledger.equity, ledger.fills, ledger.trades
    return {
        "equity": {
            "bar": [p.bar for p in eq],
            "time": [p.time for p in eq],
            "equity": [float(p.equity) for p in eq],
            "return": [float(p.return_) for p in eq],
            "drawdown": [float(p.drawdown) for p in eq],
        },
        "fills": {
            "id": [f.id for f in fills],
            "order": [f.order for f in fills],
            "bar": [f.bar for f in fills],
            "time": [f.time for f in fills],
            "symbol": [f.symbol for f in fills],
            "side": [f.side for f in fills],
            "qty": [f.qty for f in fills],
            "signed_qty": [f.qty if f.side == "buy" else -f.qty for f in fills],
            "price": [float(f.price) for f in fills],
            "fee": [float(f.fee) for f in fills],
            "notional": [float(f.price * f.qty) for f in fills],
        },
        "trades": {
            "symbol": [t.symbol for t in trades],
            "side": [t.side for t in trades],
            "qty": [t.qty for t in trades],
            "entry_bar": [t.entry_bar for t in trades],
            "entry_time": [t.entry_time for t in trades],
            "entry_price": [float(t.entry_price) for t in trades],
            "exit_bar": [t.exit_bar for t in trades],
            "exit_time": [t.exit_time for t in trades],
            "exit_price": [float(t.exit_price) for t in trades],
            "pnl": [float(t.pnl) for t in trades],
            "return": [float(t.return_) for t in trades],
            "fees": [float(t.fees) for t in trades],
            "open": [t.exit_bar is None for t in trades],
        },
        "metrics": _metric_columns(grade),
    }


def _library(name: str, what: str) -> ModuleType:
    """``name`` imported, or an ImportError naming the extra that installs it."""
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        raise ImportError(
            f"{what}() needs {name}, which is not installed: install the kestrel-sdk extra "
            f"'{name}' (uv pip install \"kestrel-sdk[{name}] @ $KESTREL/packages/kestrel-sdk\", "
            f"or uv add {name} / pip install {name})",
            name=name,
        ) from exc


_INTEGERS = {"bar", "qty", "signed_qty", "entry_bar", "exit_bar"}
_TIMES = {"time", "entry_time", "exit_time"}
_STRINGS = {"id", "order", "symbol", "side", "metric", "exact"}


def _kind(name: str) -> str:
    if name in _INTEGERS:
        return "int"
    if name in _TIMES:
        return "time"
    if name in _STRINGS:
        return "str"
    return "bool" if name == "open" else "float"


def to_pandas(columns: dict[str, Columns]) -> Frames[Any]:
    """:class:`Frames` of pandas DataFrames (``exit_bar`` is the nullable ``Int64``)."""
    pd = _library("pandas", "to_pandas")
    dtypes = {"int": "Int64", "float": "float64", "str": "string", "bool": "bool"}

    def series(name: str, values: list[Any]) -> Any:
        kind = _kind(name)
        if kind == "time":
            return pd.to_datetime(pd.Series(values, dtype=object), utc=True)
        if kind == "int" and None not in values:
            return pd.Series(values, dtype="int64")
        return pd.Series(values, dtype=dtypes[kind])

    def frame(cols: Columns) -> Any:
        return pd.DataFrame({name: series(name, values) for name, values in cols.items()})

    return Frames(**{name: frame(cols) for name, cols in columns.items()})


def to_polars(columns: dict[str, Columns]) -> Frames[Any]:
    """:class:`Frames` of polars DataFrames."""
    pl = _library("polars", "to_polars")
    dtypes = {
        "int": pl.Int64,
        "float": pl.Float64,
        "str": pl.String,
        "bool": pl.Boolean,
        "time": pl.Datetime("us", "UTC"),
    }

    def frame(cols: Columns) -> Any:
        return pl.DataFrame(cols, schema={name: dtypes[_kind(name)] for name in cols})

    return Frames(**{name: frame(cols) for name, cols in columns.items()})
