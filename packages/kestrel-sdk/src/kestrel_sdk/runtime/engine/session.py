"""INTERFACE of the engine work (the engine work replaces the bodies).

``SessionEngine`` is one session's deterministic state machine: no I/O, no clock, no
randomness. The service around it persists pentads and frames; grading replays the
sources of a record's pentads on a fresh engine.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from kestrel_protocol import (
    Blotter,
    GradeResult,
    Pentad,
    SessionFrame,
    SessionRecord,
    StandDown,
)

from ..catalog.model import LoadedScenario
from ..lang.syntax import Statement

__all__ = ["Program", "SessionEngine", "Step", "compute_grade"]


@dataclass(frozen=True, slots=True)
class Program:
    """A checked source: its exact text and its statements, ready to apply atomically."""

    source: str
    statements: tuple[Statement, ...]


@dataclass(frozen=True, slots=True)
class Step:
    """What one applied submission produced."""

    frame: SessionFrame
    stand_down: StandDown | None


class SessionEngine:
    """One session over one scenario, opened with bar 0 complete (frame seq 0)."""

    def __init__(self, loaded: LoadedScenario, session_id: str) -> None:
        raise NotImplementedError

    @property
    def status(self) -> Literal["open", "stood-down", "closed"]:
        raise NotImplementedError

    @property
    def seq(self) -> int:
        """Accepted submissions so far (the current frame's seq)."""
        raise NotImplementedError

    def check(self, source: str) -> Program:
        """Parse and validate ``source`` against this session without changing it.

        Raises ``KestrelError``: ``LIMIT_EXCEEDED``; ``INVALID_SOURCE`` with
        ``detail={"diagnostics": [...]}``; ``SESSION_STOOD_DOWN``; ``SESSION_CLOSED``.
        """
        raise NotImplementedError

    def apply(self, program: Program) -> Step:
        """Apply a checked program atomically; the new frame has ``seq + 1``."""
        raise NotImplementedError

    def submit(self, source: str) -> Step:
        """``apply(check(source))``."""
        return self.apply(self.check(source))

    def frame(self) -> SessionFrame:
        """The latest frame (its events are those of the last submission)."""
        raise NotImplementedError

    def blotter(self) -> Blotter:
        """All orders and fills so far, rooted."""
        raise NotImplementedError

    def close(self) -> SessionFrame:
        """Mark the session closed (event ``closed``); open orders are cancelled."""
        raise NotImplementedError


def compute_grade(
    loaded: LoadedScenario,
    record: SessionRecord,
    pentads: Sequence[Pentad],
    progress: Callable[[int, int], None] | None = None,
) -> GradeResult:
    """Replay ``pentads`` on a fresh engine and grade the result (spec §6 metrics and
    conformance). Pure: a function of the artifacts and the scenario alone.
    ``progress(done, total)`` is called now and then with bars replayed / total bars."""
    raise NotImplementedError
