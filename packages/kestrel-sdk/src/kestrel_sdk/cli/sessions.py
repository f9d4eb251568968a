"""``kestrel sessions``: your sessions (every page of the session list tool), as a table
or as one ``kestrel.sessions`` object."""

from __future__ import annotations

import anyio
import click
from kestrel_protocol import SessionList, SessionListEntry
from rich.table import Table

from .bootstrap import open_sdk, settings_of
from .show import json_text, stdout

__all__ = ["sessions"]


def sessions_table(listed: list[SessionListEntry]) -> Table:
    # no box, and the id never cut: it is what other commands take
    table = Table(title="Your Kestrel sessions", title_justify="left", box=None)
    for column in ("session", "scenario", "label", "status", "bar", "graded"):
        table.add_column(column, justify="right" if column == "bar" else "left")
    table.columns[0].no_wrap = True
    for entry in listed:
        clock = entry.clock
        bar = "?" if clock is None else f"{clock.bar:,}"
        graded = "yes" if entry.grade is not None else "no"
        table.add_row(entry.session, entry.scenario.id, entry.label, entry.status, bar, graded)
    return table


@click.command("sessions")
@click.option("--json", "as_json", is_flag=True, help="Print them as one kestrel.sessions object.")
@click.pass_context
def sessions(ctx: click.Context, as_json: bool) -> None:
    """List your sessions, oldest first: id, scenario, label, status, clock bar, graded.
    A sealed scenario's sessions show nothing beyond the clock."""

    async def go() -> list[SessionListEntry]:
        listed: list[SessionListEntry] = []
        async with open_sdk(settings_of(ctx)) as sdk:
            cursor: str | None = None
            while True:
                page = await sdk.sessions(cursor)
                listed.extend(page.sessions)
                cursor = page.next_cursor
                if cursor is None:
                    return listed

    listed = anyio.run(go)
    if as_json:
        click.echo(json_text(SessionList(sessions=listed)))
    else:
        stdout().print(sessions_table(listed))
