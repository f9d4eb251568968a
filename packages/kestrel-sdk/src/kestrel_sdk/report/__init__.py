"""The grade report: one self-contained HTML page per grade."""

from __future__ import annotations

from .data import ReportData, ReportFill
from .html import render_report

__all__ = ["ReportData", "ReportFill", "render_report"]
