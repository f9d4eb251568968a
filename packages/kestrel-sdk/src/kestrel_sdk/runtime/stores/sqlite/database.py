"""The SQLite store's file: how it is opened (its tables created: :mod:`..sql.tables`),
its schema version, and its background checkpoints.

One file, ``$KESTREL_HOME/kestrel.db``, in WAL mode. Checkpoints (copying the WAL into
the database, with an fsync) run on a background thread with its own connection every
:data:`CHECKPOINT_EVERY` steps or so, so that a step never pays for one; SQLite's own
auto-checkpoint stays on at twice :data:`RESTART_FRAMES`, as a backstop: when the thread
falls that far behind (starved on a busy machine), the commit that crosses it
checkpoints in the step, and the WAL starts over there. A checkpoint beside steps that
never pause never catches up with them (it copies the frames written before it began),
so the WAL would never start over and would grow to the backstop, every commit writing
past the end of an ever larger file: once the WAL holds
:data:`RESTART_FRAMES` frames (SQLite's own count, which the checkpoint reports), the
checkpoint therefore copies the frames written meanwhile with the store's lock held (a
step of this process waits those few milliseconds), and the next commit writes the WAL
over from its start. The WAL's size decides, not a count of the thread's runs: a thread
that runs late (its wakes merged on a busy machine) restarts the WAL at its first run
past the mark.

``KESTREL_SQLITE_SYNCHRONOUS`` chooses SQLite's ``synchronous``: ``NORMAL`` (the
default; in WAL mode a commit is in the WAL file, in the operating system's page cache,
before it returns: it survives the process being killed, and an operating-system crash
or power loss may lose the last commits but never corrupts the file), ``FULL`` (each
commit is also flushed to the disk: power-loss durability, at the cost of a flush per
step) or ``EXTRA``.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from pathlib import Path

from kestrel_protocol.sql import SQLITE
from kestrel_protocol.sqlite_files import transaction, use_wal
from kestrel_protocol.tables import META, create_statements
from kestrel_protocol.wal_checkpoints import WalCheckpointer

from ..sql import RUNTIME_TABLES, upgrade

__all__ = [
    "CHECKPOINT_EVERY",
    "RESTART_FRAMES",
    "SCHEMA_VERSION",
    "SYNCHRONOUS_ENV",
    "UPGRADES",
    "checkpointer",
    "open_database",
]

SCHEMA_VERSION = "11"
"""11: each bar of a forward tape keeps the clock read after its append committed
(``visible_by``); 10 (without it: its bars keep ``published_at`` alone), 9 (nor each
session its lineage, each journal row the clock bar its step reached), 8 (horizon rows
keyed by scenario ids, not lineage tags) and 7 (before each session kept whether it was
counted on its principal's horizon row; the journal keyed (session, seq) as PostgreSQL's
is, and no step files, as 6 had) are upgraded in place when opened
(:data:`UPGRADES`)."""
UPGRADES = {str(7 + since): upgrade(SQLITE, since) for since in range(4)}
"""Per schema upgraded in place: the statements that make it :data:`SCHEMA_VERSION`."""
CHECKPOINT_EVERY = 1000
"""Holds of the store's connection between background checkpoints (a step is one: its
commit and its horizon read)."""
RESTART_FRAMES = 8000
"""Frames in the WAL (pages of 4 KiB by default: ≈ 32 MB, a few thousand steps) from
which a background checkpoint lets it start over; a step waits for such a checkpoint's
end once in as many steps."""
SYNCHRONOUS_ENV = "KESTREL_SQLITE_SYNCHRONOUS"
_BACKSTOP_PAGES = 2 * RESTART_FRAMES
"""SQLite's auto-checkpoint (pages of WAL): the step's own checkpoint, only when the
background thread has fallen a whole restart behind."""


def open_database(conn: sqlite3.Connection, lock: threading.RLock) -> str:
    """Set ``conn``'s pragmas and create the schema if the file is new, or upgrade it in
    place from one in :data:`UPGRADES` (``lock`` held, one transaction: another process
    opening the file meanwhile waits, then finds it upgraded); the file's schema
    version, which the caller checks against :data:`SCHEMA_VERSION`."""
    sync = os.environ.get(SYNCHRONOUS_ENV, "NORMAL").upper()
    if sync not in {"NORMAL", "FULL", "EXTRA"}:
        sync = "NORMAL"
    conn.execute("PRAGMA busy_timeout = 30000")
    use_wal(conn)  # several processes may be opening a new file at once
    conn.execute(f"PRAGMA synchronous = {sync}")
    conn.execute(f"PRAGMA wal_autocheckpoint = {_BACKSTOP_PAGES}")
    with transaction(conn, lock):
        for statement in create_statements((META, *RUNTIME_TABLES), SQLITE, ""):
            conn.execute(statement)
        conn.execute(
            "INSERT OR IGNORE INTO meta (key, value) VALUES ('schema', ?)", (SCHEMA_VERSION,)
        )
        found = str(conn.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()[0])
        if found in UPGRADES:
            for statement in UPGRADES[found]:
                conn.execute(statement)
            conn.execute("UPDATE meta SET value = ? WHERE key = 'schema'", (SCHEMA_VERSION,))
            found = SCHEMA_VERSION
    return found


def checkpointer(path: Path, lock: threading.RLock) -> WalCheckpointer:
    """The store's background checkpoints of ``path`` (its commits under ``lock``): the
    WAL starts over from :data:`RESTART_FRAMES` frames."""
    return WalCheckpointer(path, "kestrel-checkpoint", lock=lock, restart_frames=RESTART_FRAMES)
