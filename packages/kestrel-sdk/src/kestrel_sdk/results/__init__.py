"""A graded session for notebooks: HTML views, exact ledgers and pandas/polars frames."""

from __future__ import annotations

from .html import blotter_html, grade_html, proof_html
from .ledger import EquityPoint, FillRow, Ledger, TradeRow, ledger_of
from .tables import Frames, frame_columns, to_pandas, to_polars
from .views import BlotterView, GradeView, ProofView

__all__ = [
    "BlotterView",
    "EquityPoint",
    "FillRow",
    "Frames",
    "GradeView",
    "Ledger",
    "ProofView",
    "TradeRow",
    "blotter_html",
    "frame_columns",
    "grade_html",
    "ledger_of",
    "proof_html",
    "to_pandas",
    "to_polars",
]
