"""The ``kestrel`` command line (spec §11); plugin verbs come from ``kestrel.cli``.

Exit codes: 0 ok; 1 a check failed (validation errors, verification mismatch, catalog
problems); 2 usage; 3 a typed refusal; 4 backend unavailable; 5 internal error.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Sequence
from pathlib import Path

import click

from .commands import artifact, catalog, grade, run, validate, verify
from .exits import ExitCode
from .group import PLUGIN_GROUP, KestrelGroup
from .proofs import proof
from .scenario import scenario
from .state import CliState

__all__ = ["PLUGIN_GROUP", "ExitCode", "cli", "main"]


@click.group(cls=KestrelGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--home",
    type=click.Path(file_okay=False, path_type=Path),
    help="Kestrel home (default $KESTREL_HOME or ~/.kestrel).",
)
@click.option("--remote", metavar="URL", envvar="KESTREL_REMOTE", help="Use a Kestrel door.")
@click.version_option(package_name="kestrel-sdk", prog_name="kestrel")
@click.pass_context
def cli(ctx: click.Context, home: Path | None, remote: str | None) -> None:
    """Kestrel: deterministic paper trading for software agents."""
    # Plugin verbs (secrets, mcp, door) read the environment: pass the globals on for
    # the command's duration (restored after, so an in-process caller sees no change).
    updates = {"KESTREL_HOME": str(home) if home is not None else None, "KESTREL_REMOTE": remote}
    saved = {name: os.environ.get(name) for name in updates}
    for name, value in updates.items():
        if value:
            os.environ[name] = value

    def restore() -> None:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value

    ctx.call_on_close(restore)
    ctx.obj = CliState(home=home, remote=remote or None)


for _command in (catalog, validate, run, grade, verify, artifact, proof, scenario):
    cli.add_command(_command)


def main(argv: Sequence[str] | None = None) -> None:
    """The console script ``kestrel``."""
    logging.basicConfig(
        level=logging.WARNING, stream=sys.stderr, format="kestrel: %(levelname)s: %(message)s"
    )
    cli.main(args=list(argv) if argv is not None else None, prog_name="kestrel")
