"""The root click group: global options, one-line errors, and plugin verbs.

Plugin verbs come from the entry-point group ``kestrel.cli`` (each entry point is a
click command or group, named by the entry point). They are loaded only when the verb
list is needed or the verb is invoked, and a plugin that fails to load is reported on
stderr and left out: a broken plugin never breaks the CLI. A verb of one of Kestrel's own
packages that is not installed beside this ``kestrel`` (``uv tool install`` of each
package gives each its own environment) is refused naming the package and how to add it.
"""

from __future__ import annotations

from importlib.metadata import EntryPoint, entry_points
from typing import Any

import click
from kestrel_protocol.exits import cli_error_line

from ..cli_convention import KestrelCliGroup

__all__ = ["OWN_PLUGINS", "PLUGIN_GROUP", "KestrelGroup"]

PLUGIN_GROUP = "kestrel.cli"
OWN_PLUGINS = {"door": "kestrel-door", "mcp": "kestrel-mcp", "secrets": "kestrel-secrets"}
"""The verbs Kestrel's own packages mount under ``kestrel``, by the package that brings each
(their ``kestrel.cli`` entry points; a test holds the two equal)."""


class KestrelGroup(KestrelCliGroup):
    """The ``kestrel`` group: the refusal convention, and plugin verbs from ``kestrel.cli``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._plugins: dict[str, EntryPoint] | None = None
        self._loaded: dict[str, click.Command | None] = {}

    def _entry_points(self) -> dict[str, EntryPoint]:
        if self._plugins is None:
            found: dict[str, EntryPoint] = {}
            try:
                for ep in entry_points(group=PLUGIN_GROUP):
                    if ep.name not in self.commands:
                        found.setdefault(ep.name, ep)
            except Exception as exc:  # a broken distribution's metadata
                click.echo(cli_error_line("INTERNAL", f"could not list plugins: {exc}"), err=True)
            self._plugins = found
        return self._plugins

    def _plugin(self, name: str) -> click.Command | None:
        if name in self._loaded:
            return self._loaded[name]
        ep = self._entry_points().get(name)
        command: click.Command | None = None
        if ep is not None:
            try:
                loaded = ep.load()
                if not isinstance(loaded, click.Command):
                    raise TypeError(f"{ep.value} is not a click command")
                command = loaded
            except Exception as exc:
                message = (
                    f"plugin {name!r} ({ep.value}) failed to load and is skipped: "
                    f"{type(exc).__name__}: {exc}"
                )
                click.echo(cli_error_line("INTERNAL", message), err=True)
        self._loaded[name] = command
        return command

    def list_commands(self, ctx: click.Context) -> list[str]:
        names = set(super().list_commands(ctx))
        names.update(name for name in self._entry_points() if self._plugin(name) is not None)
        return sorted(names)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        command = super().get_command(ctx, cmd_name)
        if command is not None:
            return command
        command = self._plugin(cmd_name)
        package = OWN_PLUGINS.get(cmd_name)
        if command is None and package is not None and cmd_name not in self._entry_points():
            ctx.fail(
                f"No such command {cmd_name!r}: it comes with {package}, which is not "
                "installed beside this kestrel. Install them together (uv tool install "
                f'"$KESTREL/packages/kestrel-sdk" --with "$KESTREL/packages/{package}"), '
                f"or run {package} itself (from a clone: uv run --package {package} {package} "
                f"… is kestrel {cmd_name} …)."
            )
        return command
