"""The caller's sessions, a page at a time (the session list tool).

A principal sees only its own sessions, in the order they were opened. Each is listed
with its head frame's clock: a closed session's from its stored record (no replay), an
open one's as the frame tool serves it. A sealed scenario's clock comes without
``remaining`` (the tape's length), as its frames do; nothing else of the scenario is
listed but its id and root, which the catalog shows anyway.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from kestrel_protocol import (
    Clock,
    KestrelError,
    RefusalCode,
    ScenarioRef,
    SessionFrame,
    SessionList,
    SessionListEntry,
    SessionRecord,
)
from kestrel_protocol.store import RuntimeStore, SessionRow
from kestrel_protocol.surface import next_cursor, offset_of

from .catalog import ServedCatalog

__all__ = ["PAGE_SIZE", "SessionListing"]

PAGE_SIZE: Final = 100
"""Sessions per page of the list."""


class SessionListing:
    """Lists a principal's sessions from ``store``; ``served`` says which scenarios are
    sealed and still held, ``artifact`` reads a stored object by root and ``open_frame``
    gives an open session's head frame (``principal, session_id``)."""

    def __init__(
        self,
        store: RuntimeStore,
        served: ServedCatalog,
        artifact: Callable[[str], dict[str, Any]],
        open_frame: Callable[[str, str], SessionFrame],
    ) -> None:
        self._store = store
        self._served = served
        self._artifact = artifact
        self._open_frame = open_frame

    def page(self, principal: str, cursor: str | None) -> SessionList:
        """The page of ``principal``'s sessions ``cursor`` asks for (the first: ``None``);
        a cursor this list did not give is ``INVALID_ARGUMENT`` naming it."""
        rows = self._store.sessions_of(principal)
        try:
            start = offset_of(cursor, len(rows))
        except ValueError as exc:
            raise KestrelError(
                RefusalCode.INVALID_ARGUMENT,
                f"cursor {cursor!r}: {exc}; pass the nextCursor of the previous page",
                {"cursor": cursor},
            ) from None
        end = start + PAGE_SIZE
        entries = [self._entry(principal, row) for row in rows[start:end]]
        following = next_cursor(end, len(rows))
        if following is None:
            return SessionList(sessions=entries)
        return SessionList(sessions=entries, next_cursor=following)

    def _entry(self, principal: str, row: SessionRow) -> SessionListEntry:
        frame = self._head(principal, row)
        clock = None if frame is None else frame.clock
        if clock is not None and self._served.sealed(row.scenario_id):
            clock = Clock(bar=clock.bar, time=clock.time)
        members: dict[str, Any] = {
            "session": row.id,
            "scenario": ScenarioRef(id=row.scenario_id, root=row.scenario_root),
            "label": row.label,
            "status": row.status if frame is None else frame.status,
            "clock": clock,
        }
        if row.grade_root is not None:
            members["grade"] = row.grade_root
        return SessionListEntry(**members)

    def _head(self, principal: str, row: SessionRow) -> SessionFrame | None:
        """The session's head frame; ``None`` for an open session whose scenario this
        catalog no longer holds (it cannot be replayed here)."""
        if row.status == "closed" and row.record_root is not None:
            record = SessionRecord.parse(self._artifact(row.record_root))
            return SessionFrame.parse(self._artifact(record.head))
        loaded = self._served.index.get(row.scenario_id)
        if loaded is None or loaded.scenario.root != row.scenario_root:
            return None
        return self._open_frame(principal, row.id)
