"""The session engine (spec §5) and grading (spec §6).

``SessionEngine`` is one session's deterministic state machine: no I/O, no clock, no
randomness. The service around it persists pentads and frames; grading replays the
sources of a record's pentads on a fresh engine.

The engine modules run compiled when a matching mypyc build is there (``runtime.native``):
its ``engine/`` goes first on this package's ``__path__`` before anything imports them.
"""

from __future__ import annotations

from .. import native

native.activate(__name__, __path__)

from .core import Program, SessionEngine, Step  # noqa: E402 (after activate)
from .grade import compute_grade, equity_metrics  # noqa: E402

__all__ = ["Program", "SessionEngine", "Step", "compute_grade", "equity_metrics"]
