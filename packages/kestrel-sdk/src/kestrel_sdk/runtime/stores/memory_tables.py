"""The memory store's tables (a part of :class:`.memory.MemoryStore`, which makes them):
each session's row with what hangs off it, and the artifacts, owners, grades, horizons
and operation tokens beside them, kept as the SQL adapters keep their tables.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from kestrel_protocol.store import Horizon, SessionRow

from .rows import JournalRow

__all__ = ["MemorySession", "MemoryTables"]


@dataclass(slots=True)
class MemorySession:
    """A session's row and what hangs off it."""

    row: SessionRow
    journal: list[JournalRow] = field(default_factory=list)  # row 0, then seq 1, 2, ...
    reads: list[tuple[int, int, str]] = field(default_factory=list)  # lookahead rows
    pruned: bool = False
    lineage: str | None = None  # its horizon row's key, once counted on it
    bar: int | None = None  # the clock bar its last step reached (None: pruned, or none)


class MemoryTables:
    """What the memory store holds, under one lock that serialises its methods."""

    _lock: threading.RLock
    _sessions: dict[str, MemorySession]  # in opening order
    _artifacts: dict[str, bytes]
    # root -> the sessions that made it: a tuple (almost always of one), which the
    # cycle collector stops tracking, where a set per pentad stays tracked for good
    _owners: dict[str, tuple[str, ...]]
    _pentads: dict[str, tuple[str, int]]  # journal pentad root -> (session, seq)
    _graded: dict[str, str]  # grade root -> session
    _horizons: dict[tuple[str, str], Horizon]  # (principal, scenario) -> it
    _operations: dict[str, tuple[str, str]]
