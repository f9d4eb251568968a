"""``kestrel home``: where Kestrel keeps your data, what each part is, and its size.

The listing is of the home directory itself (read from the file system, nothing
opened for writing: a home that does not exist yet is said so, not created), then of
the store's sessions: how many are open, closed and pruned, and what their steps hold,
which ``kestrel prune`` removes. A store of another schema is refused as every command
refuses it, after the listing, naming the steps that resolve it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click
from kestrel_protocol import KestrelError, RefusalCode
from kestrel_protocol.settings import KestrelSettings
from kestrel_protocol.store import MEMORY_URL, StoredSession, store_location

from ..cli_convention import fail
from .bootstrap import settings_of
from .show import json_text, size_text

__all__ = ["HOME_PARTS", "HomePart", "home", "tree_size"]


@dataclass(frozen=True, slots=True)
class HomePart:
    """One thing Kestrel may keep under the home: what it holds, and when it may go."""

    what: str
    delete: str


HOME_PARTS: dict[str, HomePart] = {
    "kestrel.db": HomePart(
        "sessions, their journals and pentads, frames, grades, horizons",
        "kestrel prune --before DATE removes closed sessions' steps; the file only to "
        "start afresh (export proofs first: kestrel proof SESSION -o FILE)",
    ),
    "kestrel.db-wal": HomePart("kestrel.db's write-ahead log (in use)", "never by hand"),
    "kestrel.db-shm": HomePart("kestrel.db's shared-memory index (in use)", "never by hand"),
    "reports": HomePart(
        "kestrel demo's grade.json and report.html, one directory per session",
        "any time (kestrel prune removes a pruned session's)",
    ),
    "catalog-shapes": HomePart(
        "what listing your own scenarios remembers of their tapes",
        "any time (the next listing re-reads the tapes)",
    ),
    "reveals": HomePart(
        "the reveals of the disguises made here (source, transform, secret: private)",
        "after kestrel scenario reveal ID -o FILE has published them",
    ),
    "door.db": HomePart(
        "a door's tokens, audit, quotas and signing keys", "not while a door serves from here"
    ),
    "door.db-wal": HomePart("door.db's write-ahead log (in use)", "never by hand"),
    "door.db-shm": HomePart("door.db's shared-memory index (in use)", "never by hand"),
    "door-voucher.key": HomePart(
        "the door's voucher signing key", "not while a door serves from here"
    ),
    ".env": HomePart(
        "your paper-only secrets (when the OS keyring is not used)", "kestrel secrets unset KEY"
    ),
    ".env.lock": HomePart(
        "the lock kestrel secrets holds while it writes .env", "any time none is running"
    ),
    ".keyring-index.lock": HomePart(
        "the lock kestrel secrets holds while it updates the OS keyring's index of keys",
        "any time none is running",
    ),
}
"""Everything Kestrel keeps under a home, by name (README: Where your data lives)."""


def tree_size(path: Path) -> int:
    """Bytes of a file, or of every file under a directory (symlinks not followed)."""
    if not path.is_dir() or path.is_symlink():
        return path.lstat().st_size
    return sum(
        entry.lstat().st_size for entry in path.rglob("*") if entry.is_file() or entry.is_symlink()
    )


def _parts(root: Path) -> list[dict[str, Any]]:
    parts = []
    for entry in sorted(root.iterdir(), key=lambda p: p.name):
        known = HOME_PARTS.get(entry.name)
        name = entry.name + ("/" if entry.is_dir() and not entry.is_symlink() else "")
        parts.append(
            {
                "path": name,
                "bytes": tree_size(entry),
                "what": known.what if known else "not Kestrel's",
                "delete": known.delete if known else "",
            }
        )
    return parts


def session_summary(sessions: list[StoredSession]) -> dict[str, Any]:
    """Counts and dates of a store's sessions, and what their steps hold."""
    closed = [s for s in sessions if s.status == "closed"]
    dates = sorted(s.closed_at for s in closed if s.closed_at)
    prunable = [s for s in closed if s.pruned_at is None and s.graded]
    return {
        "sessions": len(sessions),
        "open": len(sessions) - len(closed),
        "closed": len(closed),
        "pruned": sum(1 for s in closed if s.pruned_at is not None),
        "ungraded": sum(1 for s in closed if not s.graded),
        "undated": sum(1 for s in closed if s.pruned_at is None and not s.closed_at),
        "firstClosed": dates[0] if dates else None,
        "lastClosed": dates[-1] if dates else None,
        "stepBytes": sum(s.step_bytes for s in sessions),
        "prunableBytes": sum(s.step_bytes for s in prunable),
    }


def _summary_lines(summary: dict[str, Any]) -> list[str]:
    lines = [
        f"sessions: {summary['sessions']} ({summary['open']} open, {summary['closed']} "
        f"closed, of which {summary['pruned']} pruned); their steps hold "
        f"{size_text(summary['stepBytes'])}"
    ]
    if summary["firstClosed"]:
        lines.append(f"closed from {summary['firstClosed']} to {summary['lastClosed']} (UTC)")
    if summary["prunableBytes"]:
        lines.append(
            f"closed sessions' steps ({size_text(summary['prunableBytes'])}) go with "
            "`kestrel prune --before DATE` (try --dry-run first)"
        )
    if summary["ungraded"]:
        lines.append(
            f"{summary['ungraded']} closed session(s) not graded: prune keeps them until "
            "graded (kestrel grade SESSION)"
        )
    if summary["undated"]:
        lines.append(
            f"{summary['undated']} closed session(s) have no close date (closed before "
            "Kestrel recorded one): kestrel prune --undated takes them"
        )
    return lines


@click.command("home")
@click.option("--json", "as_json", is_flag=True, help="Print the listing as JSON.")
@click.pass_context
def home(ctx: click.Context, as_json: bool) -> None:
    """Show where Kestrel keeps your data, what each part is and its size, and what
    the sessions in the store hold (which `kestrel prune` can remove)."""
    settings = settings_of(ctx)
    root = settings.home
    data: dict[str, Any] = {"home": str(root), "exists": root.is_dir(), "parts": []}
    if root.is_dir():
        data["parts"] = _parts(root)
        data["bytes"] = sum(part["bytes"] for part in data["parts"])
    refusal = _store_into(settings, data)
    if as_json:
        click.echo(json_text(data))
    else:
        _print(data)
    if refusal is not None:
        raise fail(refusal.code, refusal.message)


def _store_into(settings: KestrelSettings, data: dict[str, Any]) -> KestrelError | None:
    """Add the store's location and session summary to ``data``; the store's refusal
    (another schema, a server down), if any, to report after the listing."""
    if settings.remote:
        data["store"] = f"the door at {settings.remote} (its operator's kestrel home)"
        return None
    try:
        location = store_location(settings.store, settings.home)
    except ValueError as exc:
        return KestrelError(RefusalCode.BACKEND_UNAVAILABLE, str(exc))
    data["store"] = str(location)
    if location.kind == "memory":
        data["store"] = f"{MEMORY_URL} (nothing is kept)"
        return None
    if location.kind == "sqlite" and (location.path is None or not location.path.exists()):
        return None  # nothing kept yet: opening it would create it
    from ..runtime.stores import open_runtime_store  # noqa: PLC0415 - the store loads only here

    try:
        store = open_runtime_store(location, settings.home)
    except KestrelError as exc:
        return exc
    try:
        data["storeBytes"] = store.footprint()
        data["summary"] = session_summary(store.stored_sessions())
    finally:
        store.close()
    return None


def _print(data: dict[str, Any]) -> None:
    if not data["exists"]:
        click.echo(f"Kestrel home: {data['home']} (not created yet: nothing kept)")
    else:
        click.echo(f"Kestrel home: {data['home']} ({size_text(data['bytes'])})")
    parts = data["parts"]
    if parts:
        width = max(len(part["path"]) for part in parts)
        click.echo("")
        for part in parts:
            size = size_text(part["bytes"])
            click.echo(f"  {part['path']:<{width}}  {size:>9}  {part['what']}")
            if part["delete"]:
                click.echo(f"  {'':<{width}}  {'':>9}  delete: {part['delete']}")
        click.echo("")
    click.echo(f"store: {data['store']}")
    if "storeBytes" in data and not str(data["store"]).startswith("sqlite:"):
        click.echo(f"store size: {size_text(data['storeBytes'])}")
    if "summary" in data:
        for line in _summary_lines(data["summary"]):
            click.echo(line)
