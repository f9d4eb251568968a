"""``kestrel prune``: remove closed sessions' steps from the store, and give the space back.

What "older than a date" means: a session is pruned when it was **closed** before the
date. The store stamps that time when a session closes (the database's clock, kept in a
table of its own that no object, root or answer of the runtime includes: determinism is
untouched), so sessions closed by any face (CLI, MCP, a door) are dated alike.

What goes, per session: its journal rows, its pentads, its lookahead reads and its
grade tokens (what grows with every step), and ``$KESTREL_HOME/reports/SESSION/``. What
stays: its row (its label stays used), record, head frame, blotter and grade, so
``kestrel grade SESSION`` still answers, and the horizons (a principal never sees a
sealed scenario afresh). A pruned session's proof or grade replay is refused saying it
was pruned. Never pruned: open or stood-down sessions, closed sessions not yet graded,
sessions closed on or after the date.
"""

from __future__ import annotations

import shutil
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import click
from kestrel_protocol.quoting import counted
from kestrel_protocol.settings import KestrelSettings
from kestrel_protocol.store import RuntimeStore, StoredSession, StoreLocation, store_location

from ..cli_convention import fail
from .bootstrap import settings_of
from .home import tree_size
from .show import json_text, size_text

__all__ = ["Moment", "closed_before", "prune"]


class Moment(click.ParamType[datetime]):
    """A date (``2026-11-01``: local midnight starting it) or an ISO 8601 time
    (``2026-11-01T12:00:00+01:00``; without an offset: local time)."""

    name = "DATE"

    def convert(
        self, value: Any, param: click.Parameter | None, ctx: click.Context | None
    ) -> datetime:
        if isinstance(value, datetime):
            return value
        try:
            moment = datetime.fromisoformat(str(value).strip())
        except ValueError:
            self.fail(
                f"{value!r} is not a date (YYYY-MM-DD) or an ISO 8601 time "
                "(YYYY-MM-DDTHH:MM[:SS][+HH:MM])",
                param,
                ctx,
            )
        return moment if moment.tzinfo is not None else moment.astimezone()


def closed_before(session: StoredSession, moment: datetime, undated: bool) -> bool:
    """Whether ``session``'s close is before ``moment`` (one with no close date counts
    when ``undated``)."""
    if not session.closed_at:
        return undated
    closed = datetime.strptime(session.closed_at, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    return closed < moment


def _report_dir(settings: KestrelSettings, session_id: str) -> Path | None:
    found = settings.home / "reports" / session_id
    return found if found.is_dir() else None


def _row(session: StoredSession, report: Path | None) -> dict[str, Any]:
    return {
        "session": session.id,
        "principal": session.principal,
        "scenario": session.scenario_id,
        "closedAt": session.closed_at,
        "steps": session.steps,
        "stepBytes": session.step_bytes,
        "report": str(report) if report is not None else None,
    }


def _open(settings: KestrelSettings) -> tuple[RuntimeStore, StoreLocation] | None:
    """The store to prune; ``None`` when there is none yet (nothing to prune)."""
    if settings.remote:
        raise fail(
            "USAGE",
            f"kestrel prune works on this machine's store, not a door's ({settings.remote}): "
            "the door's operator runs it where the door keeps its data",
        )
    try:
        location = store_location(settings.store, settings.home)
    except ValueError as exc:
        raise fail("BACKEND_UNAVAILABLE", str(exc)) from None
    if location.kind == "memory":
        raise fail("USAGE", "the memory: store keeps nothing past its process: nothing to prune")
    if location.kind == "sqlite" and (location.path is None or not location.path.exists()):
        click.echo(f"no store at {location} yet: nothing to prune")
        return None
    from ..runtime.stores import open_runtime_store  # noqa: PLC0415 - the store loads only here

    return open_runtime_store(location, settings.home), location


@click.command("prune")
@click.option(
    "--before",
    type=Moment(),
    required=True,
    help="Prune sessions closed before this date (YYYY-MM-DD, local midnight) or ISO time.",
)
@click.option(
    "--undated",
    is_flag=True,
    help="Also prune closed sessions with no close date (closed before Kestrel recorded one).",
)
@click.option("--dry-run", is_flag=True, help="List what would be pruned; delete nothing.")
@click.option("--json", "as_json", is_flag=True, help="Print the outcome as JSON.")
@click.pass_context
def prune(
    ctx: click.Context, before: datetime, undated: bool, dry_run: bool, as_json: bool
) -> None:
    """Remove the steps of sessions closed before a date (journal, pentads, their
    reports) and give the space back. Their grades, records, head frames and blotters
    stay, and so do open sessions, ungraded ones and every horizon."""
    settings = settings_of(ctx)
    opened = _open(settings)
    if opened is None:
        return
    store, location = opened
    try:
        outcome = _prune(store, settings, before, undated, dry_run)
        outcome["store"] = str(location)
    finally:
        store.close()
    if as_json:
        click.echo(json_text(outcome))
        return
    _print(outcome)


def _prune(
    store: RuntimeStore,
    settings: KestrelSettings,
    before: datetime,
    undated: bool,
    dry_run: bool,
) -> dict[str, Any]:
    closed = [
        s
        for s in store.stored_sessions()
        if s.status == "closed" and s.pruned_at is None and closed_before(s, before, undated)
    ]
    chosen = [s for s in closed if s.graded]
    rows = [_row(s, _report_dir(settings, s.id)) for s in chosen]
    outcome: dict[str, Any] = {
        "before": before.isoformat(),
        "dryRun": dry_run,
        "sessions": rows,
        "ungraded": [s.id for s in closed if not s.graded],
        "stepBytes": sum(s.step_bytes for s in chosen),
    }
    if dry_run:
        return outcome
    reports = 0
    store_before = store.footprint()
    done = []
    for session, row in zip(chosen, rows, strict=True):
        if store.prune(session.id):  # False: closed meanwhile by another process? kept
            done.append(row)
            if row["report"] is not None:
                report = Path(row["report"])
                reports += tree_size(report)
                shutil.rmtree(report)
    outcome["sessions"] = done
    store.reclaim()
    store_after = store.footprint()
    outcome["storeBytes"] = {"before": store_before, "after": store_after}
    outcome["freedBytes"] = max(0, store_before - store_after) + reports
    return outcome


def _print(outcome: dict[str, Any]) -> None:
    rows = outcome["sessions"]
    verb = "would prune" if outcome["dryRun"] else "pruned"
    for row in rows:
        report = f"; {row['report']}" if row["report"] else ""
        click.echo(
            f"{verb} {row['session']} ({row['scenario']}, closed {row['closedAt'] or 'undated'}"
            f", {counted(row['steps'], 'step')}, {size_text(row['stepBytes'])}{report})"
        )
    for session in outcome["ungraded"]:
        click.echo(f"kept {session}: closed but never graded (kestrel grade {session}, then prune)")
    if outcome["dryRun"]:
        click.echo(
            f"dry run: {len(rows)} session(s) closed before {outcome['before']} would go "
            f"({size_text(outcome['stepBytes'])} of steps); nothing was deleted"
        )
        return
    sizes = outcome["storeBytes"]
    click.echo(
        f"pruned {len(rows)} session(s) closed before {outcome['before']}: freed "
        f"{size_text(outcome['freedBytes'])} (store {size_text(sizes['before'])} -> "
        f"{size_text(sizes['after'])}); their grades, records, head frames and blotters are kept"
    )
    if not outcome["store"].startswith("sqlite:"):
        click.echo(
            "PostgreSQL keeps freed pages for the tables' next rows (VACUUM FULL returns "
            "them to the operating system)"
        )
