"""``kestrel-door feed append|replay|freeze|unseal|status``: the operator's forward tapes.

Each verb runs on the door's configured store and catalog (``--home``, ``--store``,
``$KESTREL_CATALOG_PATH``: what ``serve`` uses), so a running door (any replica) serves
what it writes at once. ``append ID`` reads a tape CSV (the header, then the new bars'
rows) from stdin or ``--file`` and appends it as one transaction, stamped with the
door's clock (its store's, ``DoorRecords.now``: the one every replica stamps arrivals
by); it is acknowledged only once written. ``replay ID FILE --every 1s`` appends
a recorded file's bars one time at a time at a wall-clock pace (an evaluation "live" on
a recorded day), saying each bar once it is written; stopped and run again, it goes on
where it was (the bars already published are accepted once). ``freeze`` ends the window
(the scenario becomes an ordinary sealed scenario, its tape fixed), ``unseal``
publishes the tape, ``status`` says how far it has grown. The runtime is reached through
a callable the composition root (:mod:`kestrel_door.cli`) injects.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import click
from kestrel_protocol import KestrelError
from kestrel_protocol.durations import duration_seconds

from .admin_cli import door_store
from .feeds import FeedRuntime, bar_groups, feed_json

__all__ = ["OpenFeeds", "make_feed_group"]

OpenFeeds = Callable[[click.Context], AbstractContextManager[FeedRuntime]]
"""``ctx → the runtime of the door's store and catalog`` (closed when the block ends)."""


def _read(file: Path | None) -> bytes:
    if file is None:
        return sys.stdin.buffer.read()
    try:
        return file.read_bytes()
    except OSError as exc:
        raise click.BadParameter(f"cannot read {file}: {exc.strerror or exc}") from None


def _in_file(refused: KestrelError, file: Path, lines: list[int]) -> KestrelError:
    """``refused`` (of one bar of ``file``, whose lines are ``lines`` of the file)
    naming the line of the file it found wrong, not the line of the bar's own CSV."""
    line = refused.detail.get("line")
    if not isinstance(line, int) or not 1 <= line <= len(lines):
        return refused
    at = lines[line - 1]
    message = refused.message.replace(f": line {line}: ", f": {file} line {at}: ", 1)
    return KestrelError(refused.code, message, {**refused.detail, "line": at})


def _appended(made: Any) -> str:
    data = feed_json(made)
    return (
        f"appended {data.get('accepted')} bar(s), {data.get('duplicates')} already published; "
        f"the tape has {data.get('bars')} bar(s), the last at {data.get('lastTime')} "
        f"(prefix root {data.get('prefixRoot')})"
    )


def _status(found: Any) -> str:
    data = feed_json(found)
    window = "unsealed" if data.get("unsealed") else "frozen" if data.get("frozen") else "open"
    return (
        f"{data.get('bars')} bar(s), the last at {data.get('lastTime')} "
        f"(prefix root {data.get('prefixRoot')}); window {window}"
    )


def make_feed_group(open_feeds: OpenFeeds) -> click.Group:
    """The ``feed`` group over the runtime ``open_feeds`` gives."""

    @click.group("feed")
    def feed_group() -> None:
        """A forward scenario's tape: append bars, replay a file, freeze, unseal."""

    @feed_group.command("append")
    @click.argument("scenario_id")
    @click.option(
        "--file",
        "file",
        type=click.Path(dir_okay=False, path_type=Path),
        default=None,
        help="The bars' tape CSV (header and rows); default stdin.",
    )
    @click.pass_context
    def append(ctx: click.Context, scenario_id: str, file: Path | None) -> None:
        """Append bars (a tape CSV) to SCENARIO_ID's forward tape, atomically."""
        data = _read(file)
        with open_feeds(ctx) as feeds:
            made = feeds.append_bars(scenario_id, data, clock=door_store(ctx).now)
        click.echo(_appended(made))

    @feed_group.command("replay")
    @click.argument("scenario_id")
    @click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
    @click.option("--every", default="1s", show_default=True, help="The pace: 1s, 50ms, 2m.")
    @click.pass_context
    def replay(ctx: click.Context, scenario_id: str, file: Path, every: str) -> None:
        """Append FILE's bars to SCENARIO_ID's tape one time at a time, one every EVERY."""
        try:
            pace = duration_seconds(every)
        except ValueError as exc:
            raise click.BadParameter(str(exc), param_hint="--every") from None
        bars = list(bar_groups(_read(file)))
        clock = door_store(ctx).now  # the one every replica reads, not this host's
        with open_feeds(ctx) as feeds:
            for n, (bar, lines) in enumerate(bars):
                if n:
                    time.sleep(pace)
                try:
                    appended = feeds.append_bars(scenario_id, bar, clock=clock)
                except KestrelError as exc:
                    raise _in_file(exc, file, lines) from None
                made = feed_json(appended)
                new = "published" if made.get("accepted") else "already published"
                click.echo(f"{new} {made.get('lastTime')}: {made.get('bars')} bar(s)")
                sys.stdout.flush()  # said only once written: a reader may count on it
        click.echo(f"replayed {len(bars)} bar(s) of {file}")

    @feed_group.command("freeze")
    @click.argument("scenario_id")
    @click.pass_context
    def freeze(ctx: click.Context, scenario_id: str) -> None:
        """End SCENARIO_ID's window: its tape is fixed, every proof replays."""
        with open_feeds(ctx) as feeds:
            found = feeds.freeze_feed(scenario_id)
        click.echo(f"froze {scenario_id}: {_status(found)}")

    @feed_group.command("unseal")
    @click.argument("scenario_id")
    @click.pass_context
    def unseal(ctx: click.Context, scenario_id: str) -> None:
        """Publish SCENARIO_ID's frozen tape (no longer served sealed)."""
        with open_feeds(ctx) as feeds:
            found = feeds.unseal_feed(scenario_id)
        click.echo(f"unsealed {scenario_id}: {_status(found)}")

    @feed_group.command("status")
    @click.argument("scenario_id")
    @click.option("--json", "as_json", is_flag=True, help="Print the status as JSON.")
    @click.pass_context
    def status(ctx: click.Context, scenario_id: str, as_json: bool) -> None:
        """How far SCENARIO_ID's forward tape has grown, and its window."""
        with open_feeds(ctx) as feeds:
            found = feeds.feed_status(scenario_id)
        click.echo(json.dumps(feed_json(found)) if as_json else f"{scenario_id}: {_status(found)}")

    return feed_group
