"""The door's scopes and which tool needs which.

Three scopes, coarse on purpose: reading never changes anything, trading drives a
session, grading runs the (possibly long) grader.
"""

from __future__ import annotations

from typing import Final

__all__ = ["ALL_SCOPES", "SCOPE_GRADE", "SCOPE_READ", "SCOPE_TRADE", "required_scope"]

SCOPE_READ: Final = "kestrel:read"
SCOPE_TRADE: Final = "kestrel:trade"
SCOPE_GRADE: Final = "kestrel:grade"
ALL_SCOPES: Final = (SCOPE_READ, SCOPE_TRADE, SCOPE_GRADE)

_REQUIRED: Final[dict[str, str]] = {
    "kestrel_catalog": SCOPE_READ,
    "kestrel_scenario": SCOPE_READ,
    "kestrel_tape": SCOPE_READ,
    "kestrel_validate": SCOPE_READ,
    "kestrel_session_frame": SCOPE_READ,
    "kestrel_session_blotter": SCOPE_READ,
    "kestrel_artifact": SCOPE_READ,
    "kestrel_verify": SCOPE_READ,
    "kestrel_session_open": SCOPE_TRADE,
    "kestrel_session_submit": SCOPE_TRADE,
    "kestrel_session_close": SCOPE_TRADE,
    "kestrel_grade": SCOPE_GRADE,
    "kestrel_operation_resume": SCOPE_GRADE,
}


def required_scope(tool: str) -> str | None:
    """The scope ``tool`` needs, or ``None`` for a tool the door does not serve."""
    return _REQUIRED.get(tool)
