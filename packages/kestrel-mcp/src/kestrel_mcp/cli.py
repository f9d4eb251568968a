"""The ``kestrel-mcp`` console script and the ``kestrel mcp`` plugin verb.

A composition root: it picks the transport (``local_transport`` by default,
``remote_transport`` when ``--remote URL`` or ``KESTREL_REMOTE`` is set), builds the
server and serves stdio. Logging goes to stderr; stdout is the protocol's.
"""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path
from typing import Any

import anyio
import click
import kestrel_sdk
from kestrel_protocol.ports import Transport
from kestrel_secrets import open_secret_store

from .server import create_kestrel_mcp_server
from .stdio import serve_stdio

__all__ = ["build_transport", "main", "mcp_command"]

logger = logging.getLogger("kestrel_mcp")


class TransportUnavailable(click.ClickException):
    """A transport that cannot be built; shown as one clear line, exit code 2."""

    exit_code = 2


def _api_token(home: str | None) -> str | None:
    """The bearer for a remote door: ``KESTREL_API_TOKEN``, else the secret store's key."""
    token = os.environ.get("KESTREL_API_TOKEN")
    if token:
        return token
    try:
        return open_secret_store(home).reveal("KESTREL_API_TOKEN")
    except Exception as exc:
        logger.warning("no KESTREL_API_TOKEN (secret store unavailable: %s)", type(exc).__name__)
        return None


def build_transport(
    remote: str | None, home: str | None, catalog_paths: tuple[str, ...] = ()
) -> Transport:
    """The transport the options choose. A missing remote transport is refused clearly."""
    if remote:
        factory: Any = getattr(kestrel_sdk, "remote_transport", None)
        if factory is None:
            raise TransportUnavailable(
                "BACKEND_UNAVAILABLE: --remote/KESTREL_REMOTE needs kestrel_sdk.remote_transport, "
                "which this kestrel-sdk does not provide yet; unset KESTREL_REMOTE to run locally"
            )
        transport: Transport = factory(base_url=remote, token=_api_token(home))
        return transport
    paths: list[str | Path] | None = list(catalog_paths) or None
    return kestrel_sdk.local_transport(home=home, catalog_paths=paths)


def _configure_logging(level: str) -> None:
    logging.basicConfig(
        stream=sys.stderr,
        level=getattr(logging, level.upper(), logging.WARNING),
        format="kestrel-mcp %(levelname)s %(name)s: %(message)s",
    )


def _run(remote: str | None, home: str | None, catalog_paths: tuple[str, ...], log: str) -> None:
    _configure_logging(log)
    transport = build_transport(remote, home, catalog_paths)
    server = create_kestrel_mcp_server(transport, secret_store=lambda: open_secret_store(home))
    anyio.run(serve_stdio, server)


_OPTIONS = [
    click.option(
        "--remote",
        envvar="KESTREL_REMOTE",
        default=None,
        metavar="URL",
        help="Serve a remote Kestrel door instead of the local runtime (env KESTREL_REMOTE).",
    ),
    click.option(
        "--home",
        envvar="KESTREL_HOME",
        default=None,
        type=click.Path(file_okay=False),
        help="Kestrel home for the local runtime (default ~/.kestrel; env KESTREL_HOME).",
    ),
    click.option(
        "--catalog-path",
        "catalog_paths",
        multiple=True,
        type=click.Path(file_okay=False),
        help="Extra scenario directory (repeatable; KESTREL_CATALOG_PATH also works).",
    ),
    click.option(
        "--log-level",
        "log",
        default="warning",
        show_default=True,
        type=click.Choice(["debug", "info", "warning", "error"], case_sensitive=False),
        help="Log level (logs go to stderr).",
    ),
]


def _with_options(func: Any) -> Any:
    for option in reversed(_OPTIONS):
        func = option(func)
    return func


@click.command(name="kestrel-mcp")
@_with_options
@click.version_option(package_name="kestrel-mcp")
def main(remote: str | None, home: str | None, catalog_paths: tuple[str, ...], log: str) -> None:
    """Serve Kestrel to an MCP host over stdio (Claude Desktop, Claude Code, Cursor, ...)."""
    _run(remote, home, catalog_paths, log)


@click.command(name="mcp")
@_with_options
@click.pass_context
def mcp_command(
    ctx: click.Context,
    remote: str | None,
    home: str | None,
    catalog_paths: tuple[str, ...],
    log: str,
) -> None:
    """Serve Kestrel as an MCP server over stdio (same as the kestrel-mcp command)."""
    # The parent ``kestrel`` group's --home/--remote apply unless given here too.
    # An option given on this command wins; otherwise the parent's (which already
    # read the environment) does.
    parent: Any = ctx.find_root().obj
    if parent is not None:
        given = click.core.ParameterSource.COMMANDLINE
        parent_remote = getattr(parent, "remote", None)
        parent_home = getattr(parent, "home", None)
        if ctx.get_parameter_source("remote") != given and parent_remote:
            remote = parent_remote
        if ctx.get_parameter_source("home") != given and parent_home is not None:
            home = str(parent_home)
    _run(remote, home, catalog_paths, log)
