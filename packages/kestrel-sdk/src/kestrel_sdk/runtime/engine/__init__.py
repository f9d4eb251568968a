"""The session engine (spec §5) and grading (spec §6)."""

from __future__ import annotations

from .grade import equity_metrics
from .session import Program, SessionEngine, Step, compute_grade

__all__ = ["Program", "SessionEngine", "Step", "compute_grade", "equity_metrics"]
