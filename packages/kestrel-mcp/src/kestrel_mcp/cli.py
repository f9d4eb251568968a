"""The ``kestrel-mcp`` console script and the ``kestrel mcp`` plugin verb.

The process's composition root: settings resolved once (flags > environment >
defaults, ``KestrelSettings``), then the transport (``local_transport`` by default,
``remote_transport`` when ``--remote URL`` or ``KESTREL_REMOTE`` is set), the secret
store and the server, served over stdio. Logging goes to stderr; stdout is the
protocol's. Failures follow the one CLI convention (``kestrel: CODE: message``).
"""

from __future__ import annotations

import gc
import logging
import os
import sys
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any

import anyio
import click
import kestrel_sdk
from kestrel_protocol import KestrelError, RefusalCode
from kestrel_protocol.confined import ConfinedTransport
from kestrel_protocol.ports import Transport
from kestrel_protocol.settings import KestrelSettings
from kestrel_protocol.surface import SURFACE
from kestrel_secrets import open_secret_store

from .server import create_kestrel_mcp_server
from .stdio import SPIN_SECONDS, serve_stdio

__all__ = [
    "LOCAL_PRINCIPAL",
    "PRINCIPAL_ENV",
    "TERMINAL_NOTE",
    "build_transport",
    "main",
    "mcp_command",
]


LOCAL_PRINCIPAL = "local"
"""Whom the local runtime's sessions belong to unless ``--principal`` names another."""
PRINCIPAL_ENV = "KESTREL_PRINCIPAL"
TERMINAL_NOTE = (
    "kestrel-mcp: serving MCP over stdio, for an MCP host to start (add it to Claude, "
    "Cursor, …: packages/kestrel-mcp/README.md); it reads JSON-RPC from this terminal "
    "until Ctrl-D or Ctrl-C"
)
"""What a ``kestrel-mcp`` started in a terminal says on stderr (it would otherwise wait in
silence for a host's first message)."""


def build_transport(settings: KestrelSettings, principal: str | None = None) -> Transport:
    """The transport ``settings`` choose: the door at ``remote`` (whose token names the
    principal), else the local runtime acting as ``principal`` (default ``local``)."""
    if settings.remote:
        if principal is not None:
            raise click.UsageError(
                "--principal is for the local runtime: a door names the principal by its token"
            )
        return kestrel_sdk.remote_transport(
            base_url=settings.remote, token=kestrel_sdk.door_token(settings)
        )
    return kestrel_sdk.local_transport(
        home=settings.home,
        catalog_paths=settings.catalog_dirs,
        store=settings.store,
        principal=principal if principal is not None else LOCAL_PRINCIPAL,
    )


def _configure_logging(level: str) -> None:
    logging.basicConfig(
        stream=sys.stderr,
        level=getattr(logging, level.upper(), logging.WARNING),
        format="kestrel-mcp %(levelname)s %(name)s: %(message)s",
    )


def _looked_in(settings: KestrelSettings) -> str:
    """Where the transport ``settings`` choose finds its scenarios, for a refusal."""
    if settings.remote:
        return f"the catalog of the door at {settings.remote}"
    if settings.catalog_paths:
        return "the shipped scenarios and " + ", ".join(map(str, settings.catalog_paths))
    extra = os.environ.get(kestrel_sdk.CATALOG_PATH_ENV, "").strip()
    if extra:
        return f"the shipped scenarios and {kestrel_sdk.CATALOG_PATH_ENV}={extra}"
    return (
        "the shipped scenarios only (--catalog-path DIR or "
        f"{kestrel_sdk.CATALOG_PATH_ENV} adds a directory)"
    )


async def _served_only(
    transport: Transport, scenarios: tuple[str, ...], where: str
) -> ConfinedTransport:
    """``transport`` serving only ``scenarios``, each checked in its catalog at start: an
    id it lacks is refused ``UNKNOWN_SCENARIO`` naming it and ``where`` it was looked for,
    as ``kestrel run --scenario`` refuses one, rather than served as an empty catalog."""
    tool = SURFACE.projecting("catalog")
    catalog = await transport.invoke(tool, tool.parse({}))
    known = {str(s["id"]) for s in catalog.to_json()["scenarios"]}
    unknown = [s for s in scenarios if s not in known]
    if unknown:
        await transport.aclose()
        names = ", ".join(map(repr, unknown))
        raise KestrelError(
            RefusalCode.UNKNOWN_SCENARIO,
            f"no scenario {names} (--scenario) in the catalog; looked in {where}",
            {"scenario": unknown[0], "where": where},
        )
    return ConfinedTransport(transport, scenarios)


async def _serve(
    settings: KestrelSettings, transport: Transport, scenarios: tuple[str, ...], spin: float
) -> None:
    if scenarios:
        transport = await _served_only(transport, scenarios, _looked_in(settings))
    server = create_kestrel_mcp_server(
        transport, secret_store=lambda: open_secret_store(settings.home)
    )
    await serve_stdio(server, spin=spin)


def _run(
    settings: KestrelSettings,
    log: str,
    spin_us: int,
    principal: str | None,
    scenarios: tuple[str, ...] = (),
) -> None:
    """The ``kestrel-mcp`` process: transport, secret store and server from ``settings``;
    with ``scenarios``, every tool sees and trades only those (:mod:`kestrel_protocol.confined`),
    an id the catalog lacks refused at start."""
    _configure_logging(log)
    if principal is not None and not principal.strip():
        raise click.BadParameter("the principal is empty", param_hint="--principal")
    transport = build_transport(settings, principal)
    # What start-up built (modules, the surface, the runtime) lives as long as the process:
    # out of the collector's sight, a full collection walks only what serving made. With it
    # in sight, a full collection mid-session took 29 ms, a whole ~5,000-call window's share.
    gc.freeze()
    if sys.stdin.isatty():  # started by hand: say what it waits for (hosts pipe stdin)
        click.echo(TERMINAL_NOTE, err=True)
    anyio.run(partial(_serve, settings, transport, scenarios, spin_us / 1_000_000))


_OPTIONS = [
    click.option(
        "--remote",
        default=None,
        metavar="URL",
        help=(
            "Serve a remote Kestrel door instead of the local runtime (env KESTREL_REMOTE); "
            "its token: $KESTREL_API_TOKEN, else the secret store's."
        ),
    ),
    click.option(
        "--home",
        default=None,
        type=click.Path(file_okay=False),
        help="Kestrel home for the local runtime (default ~/.kestrel; env KESTREL_HOME).",
    ),
    click.option(
        "--store",
        default=None,
        metavar="URL",
        help=(
            "The local runtime's store: sqlite:///PATH, postgresql://… or memory: "
            "(env KESTREL_STORE)."
        ),
    ),
    click.option(
        "--catalog-path",
        "catalog_paths",
        multiple=True,
        type=click.Path(file_okay=False),
        help="Extra scenario directory (repeatable; KESTREL_CATALOG_PATH also works).",
    ),
    click.option(
        "--principal",
        default=None,
        envvar=PRINCIPAL_ENV,
        metavar="NAME",
        help=(
            "Whom the local runtime's sessions belong to (default local; env "
            f"{PRINCIPAL_ENV}): a harness gives each run of an agent its own, so that "
            "runs do not share a horizon. The agent's tools cannot change it."
        ),
    ),
    click.option(
        "--scenario",
        "scenarios",
        multiple=True,
        metavar="ID",
        help=(
            "Serve only this scenario of the catalog (repeatable): the catalog lists only "
            "these and any other id is UNKNOWN_SCENARIO, as one the catalog lacks. A harness "
            "gives each run the scenario of its sample, so that a disguised tape's run "
            "cannot open its labelled twin."
        ),
    ),
    click.option(
        "--log-level",
        "log",
        default="warning",
        show_default=True,
        type=click.Choice(["debug", "info", "warning", "error"], case_sensitive=False),
        help="Log level (logs go to stderr).",
    ),
    click.option(
        "--spin-us",
        default=int(SPIN_SECONDS * 1_000_000),
        show_default=True,
        type=click.IntRange(min=0),
        help=(
            "Microseconds to poll for a client's next request before sleeping, while it "
            "answers that fast (an agent stepping in a loop); 0 never polls."
        ),
    ),
]


def _with_options(func: Any) -> Any:
    for option in reversed(_OPTIONS):
        func = option(func)
    return func


@click.command(name="kestrel-mcp", cls=kestrel_sdk.KestrelCliCommand)
@_with_options
@click.version_option(package_name="kestrel-mcp")
def main(**options: Any) -> None:
    """Serve Kestrel to an MCP host over stdio (Claude Desktop, Claude Code, Cursor, ...)."""
    _start(None, **options)


@click.command(name="mcp")
@_with_options
@click.pass_context
def mcp_command(ctx: click.Context, /, **options: Any) -> None:
    """Serve Kestrel as an MCP server over stdio (same as the kestrel-mcp command)."""
    # The ``kestrel`` group's settings apply; an option given here wins over them.
    _start(ctx.find_object(KestrelSettings), **options)


def _start(  # noqa: PLR0917 - one parameter per click option
    inherited: KestrelSettings | None,
    remote: str | None,
    home: str | None,
    store: str | None,
    catalog_paths: tuple[str, ...],
    principal: str | None,
    scenarios: tuple[str, ...],
    log: str,
    spin_us: int,
) -> None:
    """Either command, its options given: the settings they resolve (over ``inherited``,
    the ``kestrel`` group's, when given), then the process (:func:`_run`)."""
    if inherited is None:
        settings = KestrelSettings.resolve(
            home=home, remote=remote, catalog_paths=catalog_paths, store=store
        )
    else:
        settings = replace(
            inherited.with_flags(home, remote, store),
            catalog_paths=tuple(Path(p) for p in catalog_paths) or inherited.catalog_paths,
        )
    _run(settings, log, spin_us, principal, scenarios)
