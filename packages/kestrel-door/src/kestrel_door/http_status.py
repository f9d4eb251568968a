"""Which HTTP status carries which refusal code on the ``/v1`` face.

The body always says the code; the status only lets generic HTTP tooling (proxies,
retries, dashboards) react sensibly without reading it.
"""

from __future__ import annotations

from typing import Final

__all__ = ["status_for"]

_STATUS: Final[dict[str, int]] = {
    "INVALID_SOURCE": 422,
    "LIMIT_EXCEEDED": 422,
    "UNKNOWN_SCENARIO": 404,
    "SCENARIO_SEALED": 403,
    "UNKNOWN_SESSION": 404,
    "UNKNOWN_ARTIFACT": 404,
    "UNKNOWN_OPERATION": 404,
    "SESSION_CLOSED": 409,
    "SESSION_STOOD_DOWN": 409,
    "FORBIDDEN": 403,
    "PAYMENT_INVALID": 402,
    "APPROVAL_REQUIRED": 403,
    "SECRET_KEY_INVALID": 400,
    "SECRET_KEY_LIVE": 400,
    "SECRET_STORE_UNAVAILABLE": 503,
    "BACKEND_UNAVAILABLE": 503,
    "INVALID_ARGUMENT": 400,
    "BAR_NOT_PUBLISHED": 409,
}


def status_for(code: str) -> int:
    """The 4xx (or 503) for a refusal code; a code from a newer backend is a 400."""
    return _STATUS.get(code, 400)
