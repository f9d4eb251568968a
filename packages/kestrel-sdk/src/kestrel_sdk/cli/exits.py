"""Exit codes of the ``kestrel`` CLI (a stable contract for scripts)."""

from __future__ import annotations

from enum import IntEnum

__all__ = ["ExitCode", "exit_code_for"]


class ExitCode(IntEnum):
    """What a script can switch on after running ``kestrel``."""

    OK = 0
    FAILED = 1
    """A check failed: validation diagnostics, a verification mismatch, catalog problems."""
    USAGE = 2
    """Bad command line (click's own usage errors)."""
    REFUSED = 3
    """The runtime refused with a typed refusal (``kestrel: CODE: message`` on stderr)."""
    UNAVAILABLE = 4
    """The backend could not be reached or used (``BACKEND_UNAVAILABLE``)."""
    INTERNAL = 5
    """An unexpected fault (a bug): one line on stderr; ``KESTREL_DEBUG=1`` shows the trace."""


def exit_code_for(code: str) -> ExitCode:
    """The exit code of a refusal code."""
    return ExitCode.UNAVAILABLE if code == "BACKEND_UNAVAILABLE" else ExitCode.REFUSED
