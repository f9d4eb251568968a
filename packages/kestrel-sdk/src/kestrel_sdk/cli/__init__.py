"""The ``kestrel`` command line (docs/spec.md §11); plugin verbs come from ``kestrel.cli``.

Every failure is one line ``kestrel: CODE: message`` on stderr and an exit code of the
one table (``kestrel_protocol.exits``, docs/cli.md): 0 ok; 1 a check failed or invalid
input; 2 usage; 3 a typed refusal.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Sequence
from pathlib import Path

import click
from kestrel_protocol.exits import ExitCode
from kestrel_protocol.settings import KestrelSettings

from .commands import artifact, catalog, grade, run, validate, verify
from .disguise import disguise as _disguise  # noqa: F401 - registers scenario disguise/reveal
from .group import PLUGIN_GROUP, KestrelGroup
from .home import home
from .proofs import proof
from .prune import prune
from .scenario import scenario
from .sealed_copy import sealed_copy as _sealed_copy  # noqa: F401 - registers scenario sealed-copy
from .sessions import sessions

__all__ = ["PLUGIN_GROUP", "ExitCode", "cli", "main"]


@click.group(cls=KestrelGroup)
@click.option(
    "--home",
    type=click.Path(file_okay=False, path_type=Path),
    help="Kestrel home (default $KESTREL_HOME or ~/.kestrel).",
)
@click.option(
    "--remote",
    metavar="URL",
    help=(
        "Use a Kestrel door (default $KESTREL_REMOTE); its token: $KESTREL_API_TOKEN, else "
        "the secret store's."
    ),
)
@click.option(
    "--store",
    metavar="URL",
    help=(
        "sqlite:///PATH, postgresql://… or memory: (default $KESTREL_STORE, else the "
        "home's kestrel.db)."
    ),
)
@click.option(
    "--catalog-path",
    "catalog_paths",
    multiple=True,
    type=click.Path(file_okay=False),
    help="Extra scenario directory (repeatable; KESTREL_CATALOG_PATH also works).",
)
@click.version_option(package_name="kestrel-sdk", prog_name="kestrel")
@click.pass_context
def cli(
    ctx: click.Context,
    home: Path | None,
    remote: str | None,
    store: str | None,
    catalog_paths: tuple[str, ...],
) -> None:
    """Kestrel: deterministic paper trading for software agents."""
    # Resolved once (flags > environment > defaults); verbs and plugin verbs take it
    # with ctx.find_object(KestrelSettings).
    ctx.obj = KestrelSettings.resolve(
        home=home, remote=remote, store=store, catalog_paths=catalog_paths
    )


for _command in (catalog, validate, run, grade, verify, artifact, proof, scenario, home, prune):
    cli.add_command(_command)
cli.add_command(sessions)


def main(argv: Sequence[str] | None = None) -> None:
    """The console script ``kestrel``."""
    logging.basicConfig(
        level=logging.WARNING, stream=sys.stderr, format="kestrel: %(levelname)s: %(message)s"
    )
    cli.main(args=list(argv) if argv is not None else None, prog_name="kestrel")
