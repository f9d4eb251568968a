"""The session engine (docs/spec.md §5) and grading (docs/spec.md §6).

``SessionEngine`` is one session's deterministic state machine: no I/O, no clock, no
randomness. The service around it persists pentads and frames; grading replays the
sources of a record's pentads on a fresh engine.
"""

from __future__ import annotations

from .chain import chain_engine
from .core import Program, SessionEngine
from .grade import compute_grade, equity_metrics, measure_grade
from .step import Step

__all__ = [
    "Program",
    "SessionEngine",
    "Step",
    "chain_engine",
    "compute_grade",
    "equity_metrics",
    "measure_grade",
]
