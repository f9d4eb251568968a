"""The one refusal convention of every Kestrel command line (docs/cli.md).

``kestrel``, ``kestrel secrets``, ``kestrel door``, ``kestrel-mcp`` and ``kestrel-door``
all end the same way: on failure one line ``kestrel: CODE: message`` on stderr and an
exit code from :class:`ExitCode`, so a script needs one table for all of them.
"""

from __future__ import annotations

from enum import IntEnum

from kestrel_console import INTERRUPTED_EXIT

__all__ = ["FAILED_CODES", "ExitCode", "cli_error_line", "exit_code_for"]


class ExitCode(IntEnum):
    """What a script can switch on after running any Kestrel command."""

    OK = 0
    FAILED = 1
    """A check failed or the input is invalid (see :data:`FAILED_CODES`)."""
    USAGE = 2
    """Bad command line: an unknown option, a missing argument (``USAGE``)."""
    REFUSED = 3
    """A typed refusal: every other ``RefusalCode`` (``UNKNOWN_SESSION``,
    ``SECRET_KEY_LIVE``, ``BACKEND_UNAVAILABLE``, ...)."""
    INTERRUPTED = INTERRUPTED_EXIT
    """Ctrl-C (``INTERRUPTED``): the command did not finish. 128 + SIGINT, as a shell
    reports an interrupted command, whether it came while the command was loading
    (nothing printed) or while it ran (one line saying what it left undone)."""


FAILED_CODES = frozenset(
    {
        "CHECK_FAILED",  # validation diagnostics, a verification mismatch, catalog problems
        "INVALID_INPUT",  # a file that cannot be read, is not UTF-8 or not the object expected
        "INVALID_SOURCE",
        "INVALID_ARGUMENT",
        "SECRET_KEY_INVALID",
        "INTERNAL",  # an unexpected fault; Python itself exits 1 on one
    }
)
"""The codes that exit 1; ``USAGE`` exits 2, ``INTERRUPTED`` 130 and every other code 3."""


def exit_code_for(code: str) -> ExitCode:
    """The exit code of a line's ``CODE``."""
    if code == "USAGE":
        return ExitCode.USAGE
    if code == "INTERRUPTED":
        return ExitCode.INTERRUPTED
    if code in FAILED_CODES:
        return ExitCode.FAILED
    return ExitCode.REFUSED


def cli_error_line(code: str, message: str) -> str:
    """``kestrel: CODE: message`` on one line (line breaks in ``message`` become spaces)."""
    flat = " ".join(message.split())
    return f"kestrel: {code}: {flat}"
