"""What ``kestrel-door serve`` seals besides its ``--seal`` (the seals its store keeps),
what it says at start of the catalog it serves and what it seals, and ``kestrel-door
unseal``.

An operator who typed ``--seal acme-trnd`` is told at once (a usage error naming the
id, by ``kestrel_door.serve_cli``); one who sealed nothing, or relied on a
``scenario.toml`` that does not say ``sealed = true``, reads it on the door's first
lines rather than in a grade. A ``--seal`` is kept in the door's store
(:mod:`.seal_records`): every door started on it seals the scenario too, so a replica
started without ``--seal`` serves no sealed tape, until ``kestrel-door unseal ID``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import click
from kestrel_protocol.exits import cli_error_line, exit_code_for

from .admin_cli import door_store
from .seal_records import SqlSealRecords

__all__ = ["catalog_line", "keep_seals", "kept_seals", "seal_line", "unseal"]


def kept_seals(store: object, specs: Iterable[tuple[str, str | None]]) -> list[str]:
    """The ``--seal`` entries (``ID`` or ``ID=SERVED_ID``) the door's ``store`` keeps for
    the scenarios ``specs`` (this start's ``--seal``) does not name."""
    if not isinstance(store, SqlSealRecords):  # pragma: no cover - every adapter is one
        return []
    named = {source for source, _ in specs}
    kept = [(s, served) for s, served in store.kept_seals() if s not in named]
    return [s if served is None else f"{s}={served}" for s, served in kept]


def keep_seals(store: object, specs: Iterable[tuple[str, str | None]]) -> None:
    """Keep this start's ``--seal`` (``specs``, checked against the catalog) in ``store``."""
    if isinstance(store, SqlSealRecords):
        store.keep_seals(specs)


@click.command("unseal")
@click.argument("scenario_id")
@click.pass_context
def unseal(ctx: click.Context, scenario_id: str) -> None:
    """Remove the seal the store keeps of SCENARIO_ID (its id or the id it is served
    under): a door started after serves its tape (started without --seal)."""
    store = door_store(ctx)
    if not isinstance(store, SqlSealRecords) or not store.remove_seal(scenario_id):
        code = "INVALID_INPUT"
        message = f"the door's store keeps no seal of {scenario_id!r} (see serve's start lines)"
        click.echo(cli_error_line(code, message), err=True)
        raise click.exceptions.Exit(int(exit_code_for(code)))
    click.echo(
        f"unsealed {scenario_id}: a door started from now serves its tape; restart every "
        "running door without --seal"
    )


def catalog_line(runtime: Any) -> str:
    """The catalog the door serves: its root, and how many scenarios come from where."""
    index, catalog = runtime.index, runtime.catalog()
    loaded = [index.get(i) for i in index.ids()]
    user = sorted({str(s.origin.parent) for s in loaded if s is not None and s.origin})
    mine = sum(1 for s in loaded if s is not None and s.origin is not None)
    where = f"; {mine} from {', '.join(user)}" if user else ""
    return (
        f"kestrel-door: catalog {catalog.root}: {len(loaded)} scenarios "
        f"({len(loaded) - mine} shipped{where})"
    )


def seal_line(runtime: Any, seal: Iterable[str], kept: Iterable[str] = ()) -> str:
    """Which scenarios the door seals, each with why (``--seal``, the door's store or its
    scenario.toml); ``seal`` and ``kept``: the ids ``--seal`` and the store's seals
    serve (a renamed copy's served id)."""
    why = dict.fromkeys(kept, "the door's store") | dict.fromkeys(seal, "--seal")
    index = runtime.index
    sealed = [i for i in index.ids() if runtime.sealed(i)]
    if not sealed:
        return "kestrel-door: sealed: none (every scenario's tape is served; --seal ID seals one)"
    named = [f"{i} ({why.get(i, 'its scenario.toml')})" for i in sealed]
    return f"kestrel-door: sealed: {', '.join(named)}"
