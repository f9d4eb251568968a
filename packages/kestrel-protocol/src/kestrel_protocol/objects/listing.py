"""The caller's sessions, listed: each one's id, scenario, label, status and clock."""

from __future__ import annotations

from typing import Literal

from ..model import ProtocolModel, RootStr
from .session import Clock, ScenarioRef, SessionStatus

__all__ = ["SessionList", "SessionListEntry"]


class SessionListEntry(ProtocolModel):
    """One session of the caller's as the list shows it.

    ``clock`` is its head frame's (a sealed scenario's without ``remaining``, which would
    tell the tape's length), or ``None`` when this runtime's catalog no longer holds the
    scenario it was opened on; ``grade`` the root of its grade once graded.
    """

    session: str
    scenario: ScenarioRef
    label: str
    status: SessionStatus
    clock: Clock | None
    grade: RootStr | None = None


class SessionList(ProtocolModel):
    """A page of the caller's sessions, oldest first (the order they were opened in);
    ``nextCursor``, when present, asks for the next page."""

    kind: Literal["kestrel.sessions"] = "kestrel.sessions"
    sessions: list[SessionListEntry]
    next_cursor: str | None = None
