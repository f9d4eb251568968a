"""What a grade report shows, gathered once and rendered without further I/O."""

from __future__ import annotations

from dataclasses import dataclass

from kestrel_protocol import GradeResult, Scenario

__all__ = ["ReportData", "ReportFill"]


@dataclass(frozen=True, slots=True)
class ReportFill:
    """One execution, placed on the price chart by bar index."""

    bar: int
    time: str
    symbol: str
    side: str
    qty: int | str
    price: float
    fee: str
    order: str


@dataclass(frozen=True, slots=True)
class ReportData:
    """Per-bar series over the processed bars (bar 0 … T) and everything the page names.

    Floats appear here only for drawing: every number a reader copies comes from the
    grade's own decimal strings.
    """

    grade: GradeResult
    scenario: Scenario
    times: list[str]
    equity: list[float]
    closes: dict[str, list[float]]
    fills: list[ReportFill]
    record_root: str
    blotter_root: str
