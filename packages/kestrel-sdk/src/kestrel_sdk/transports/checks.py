"""The argument checks both transports run before a call leaves the caller.

Each is the ``check`` of the tool that projects the ``Transport`` method, so a Python
caller with a bad label (or a lone surrogate, or a wrong type) gets the same
``INVALID_ARGUMENT`` (code, message, detail) as an MCP or HTTP caller, whichever
transport it holds.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from kestrel_protocol.surface import SURFACE

__all__ = [
    "CHECK_ARTIFACT",
    "CHECK_OPEN",
    "CHECK_RESUME",
    "CHECK_SCENARIO",
    "CHECK_SESSION",
    "CHECK_SUBMIT",
    "CHECK_VALIDATE",
]


def _check(method: str) -> Callable[..., None]:
    return SURFACE.projecting(method).check


CHECK_OPEN: Final = _check("open_session")
CHECK_SUBMIT: Final = _check("submit")
CHECK_VALIDATE: Final = _check("validate")
CHECK_SCENARIO: Final = _check("scenario")
CHECK_SESSION: Final = _check("frame")
CHECK_RESUME: Final = _check("resume")
CHECK_ARTIFACT: Final = _check("artifact")
