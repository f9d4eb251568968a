"""``cell_text``: a cell of a DataFrame or Parquet table as the text a CSV would hold."""

from __future__ import annotations

import math
from datetime import date, datetime
from decimal import Decimal
from typing import Any

__all__ = ["cell_text"]


def cell_text(value: Any) -> str:
    """A cell of a DataFrame or Parquet table as the text a CSV would hold.

    Floats keep their shortest round-trip form (``104.06``, not ``104.0600000000000023``;
    a numpy ``float64`` too); times their ISO-8601 form with any offset; decimals every
    digit they hold; missing values become ``""``.
    """
    if value is None:
        return ""
    if isinstance(value, float):
        return "" if math.isnan(value) else repr(float(value))
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, Decimal):
        return "" if value.is_nan() else f"{value:f}"
    isoformat = getattr(value, "isoformat", None)  # pandas Timestamp, numpy datetime64 wrappers
    if callable(isoformat):
        text = isoformat()
        return "" if text == "NaT" else str(text)
    item = getattr(value, "item", None)  # numpy scalars
    if callable(item):
        return cell_text(item())
    return str(value)
