"""The refusal convention (``kestrel_protocol.exits``) as click classes, for every
Kestrel console script: ``kestrel``, ``kestrel-mcp`` and ``kestrel-door`` (and the
plugin verbs mounted under ``kestrel``, whose errors reach its ``main``).

Whatever ends a command (a refusal, a usage error, an unreadable file, a bug) is
reported as one line ``kestrel: CODE: message`` on stderr with the exit code of the
one table; never a traceback (``KESTREL_DEBUG=1`` adds one for ``INTERNAL``).
"""

from __future__ import annotations

import logging
import os
import sys
import traceback
from collections.abc import Sequence
from typing import Any, Final, NoReturn

import click
from kestrel_protocol import KestrelError
from kestrel_protocol.durations import duration_seconds
from kestrel_protocol.exits import cli_error_line, exit_code_for

__all__ = [
    "TRUSTED_KEYS",
    "Duration",
    "KestrelCliCommand",
    "KestrelCliGroup",
    "fail",
    "report_and_exit",
]

log = logging.getLogger(__name__)

TRUSTED_KEYS: Final = "URL|JWKS-FILE"
"""What ``--trust`` takes, in every help and line naming it (``kestrel verify``,
``kestrel board``): a door's URL, its JWKS URL, or a JWKS file."""


class Duration(click.ParamType[float]):
    """A duration in seconds (``kestrel run --wait``), written in the forms
    :func:`kestrel_protocol.durations.duration_seconds` reads, as every command line's."""

    name = "duration"

    def convert(
        self, value: Any, param: click.Parameter | None, ctx: click.Context | None
    ) -> float:
        if isinstance(value, float):
            return value
        try:
            return duration_seconds(str(value))
        except ValueError as exc:
            self.fail(str(exc), param, ctx)


def fail(code: str, message: str) -> click.exceptions.Exit:
    """Print ``kestrel: CODE: message`` on stderr; return the exit to raise."""
    click.echo(cli_error_line(code, message), err=True)
    return click.exceptions.Exit(int(exit_code_for(code)))


def _line_of(exc: BaseException) -> tuple[str, str]:
    if isinstance(exc, KestrelError):
        return str(exc.code), exc.message
    if isinstance(exc, click.UsageError):
        hint = f" (see '{exc.ctx.command_path} --help')" if exc.ctx is not None else ""
        return "USAGE", _missing_command(exc) or exc.format_message() + hint
    if isinstance(exc, click.ClickException):  # e.g. a file click could not open
        return "INVALID_INPUT", exc.format_message()
    if isinstance(exc, (click.exceptions.Abort, KeyboardInterrupt)):
        return "INTERRUPTED", "interrupted"
    if os.environ.get("KESTREL_DEBUG"):
        traceback.print_exception(exc, file=sys.stderr)
    log.debug("internal error", exc_info=exc)
    detail = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    return "INTERNAL", f"{detail} (set KESTREL_DEBUG=1 for details)"


def _missing_command(exc: click.UsageError) -> str | None:
    """For a group given no command (``kestrel scenario``, ``kestrel-door``), whose error
    click makes its whole help: the commands it takes, in one line."""
    ctx = exc.ctx
    if not isinstance(exc, click.exceptions.NoArgsIsHelpError) or ctx is None:
        return None
    group = ctx.command
    names = group.list_commands(ctx) if isinstance(group, click.Group) else []
    return (
        f"missing command: {ctx.command_path} takes one of {', '.join(names)} "
        f"(see '{ctx.command_path} --help')"
    )


def report_and_exit(exc: BaseException) -> NoReturn:
    """Report ``exc`` by the convention and exit with its code."""
    code, message = _line_of(exc)
    raise SystemExit(int(fail(code, message).exit_code))


HELP_OPTIONS = ["-h", "--help"]
"""Every Kestrel command and subcommand answers both (subcommands inherit the setting)."""


class _Convention:
    """``main`` with click's own error printing replaced by the convention, and ``-h``
    beside ``--help``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        settings = dict(kwargs.pop("context_settings", None) or {})
        settings.setdefault("help_option_names", HELP_OPTIONS)
        base: Any = super()
        base.__init__(*args, context_settings=settings, **kwargs)

    def main(
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        base: Any = super()
        if not standalone_mode:
            return base.main(args, prog_name, complete_var, False, **extra)
        try:
            result = base.main(args, prog_name, complete_var, False, **extra)
        except SystemExit:
            raise
        except BaseException as exc:  # everything else is reported, never a traceback
            report_and_exit(exc)
        raise SystemExit(result if isinstance(result, int) else 0)


class KestrelCliCommand(_Convention, click.Command):
    """A console-script command that follows the convention (``kestrel-mcp``)."""


class KestrelCliGroup(_Convention, click.Group):
    """A console-script group that follows the convention (``kestrel-door``)."""
