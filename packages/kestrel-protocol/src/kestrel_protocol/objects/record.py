"""The session record: the artifact a close produces and a grade points at."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from ..model import ProtocolModel, RootStr, SelfRooted
from .session import ScenarioRef

__all__ = ["Lookahead", "LookaheadRead", "SessionRecord"]


class LookaheadRead(ProtocolModel):
    """A submission made behind its principal's horizon: before submission ``seq``, at
    clock bar ``bar``, the principal had been shown a later bar (by another of its
    sessions, the tape, ...), as ``read`` says."""

    seq: int = Field(ge=0)
    bar: int = Field(ge=0)
    """The session's clock bar at that submission."""
    read: str
    """What had shown the later bar: ``tape acme-trend read``, ``session ks_… of the
    same principal had reached bar 2519``."""


class Lookahead(ProtocolModel):
    """What the runtime saw of the principal's reads while the session was open.

    ``sealed``: the scenario was sealed whenever a runtime served the session (no face
    could show its tape or a bar after the clock). Reads outside the runtime (a CSV on
    the agent's own disk) cannot be seen, and are not here.
    """

    sealed: bool
    reads: list[LookaheadRead]


class SessionRecord(SelfRooted):
    """Pentad roots in order, the head frame root, the blotter root and the lookahead
    the runtime saw (the grade's ``no-lookahead`` check is computed from it)."""

    kind: Literal["kestrel.session"] = "kestrel.session"
    session: str
    scenario: ScenarioRef
    label: str
    status: Literal["closed"] = "closed"
    pentads: list[RootStr]
    head: RootStr
    blotter_root: RootStr
    lookahead: Lookahead
