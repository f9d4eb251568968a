"""The session record: the artifact a close produces and a grade points at."""

from __future__ import annotations

from typing import Literal

from ..model import RootStr, SelfRooted
from .session import ScenarioRef

__all__ = ["SessionRecord"]


class SessionRecord(SelfRooted):
    """Pentad roots in order, the head frame root and the blotter root."""

    kind: Literal["kestrel.session"] = "kestrel.session"
    session: str
    scenario: ScenarioRef
    label: str
    status: Literal["closed"] = "closed"
    pentads: list[RootStr]
    head: RootStr
    blotter_root: RootStr
