"""The SQLite store's file: its schema, how it is opened, and its background checkpoints.

One file, ``$KESTREL_HOME/kestrel.db``, in WAL mode. Checkpoints (copying the WAL into
the database, with an fsync) run on a background thread with its own connection every
:data:`CHECKPOINT_EVERY` commits, so that a step never pays for one; SQLite's own
auto-checkpoint stays on, far higher, as a backstop.

``KESTREL_SQLITE_SYNCHRONOUS`` chooses SQLite's ``synchronous``: ``NORMAL`` (the
default; in WAL mode a commit is in the WAL file, in the operating system's page cache,
before it returns: it survives the process being killed, and an operating-system crash
or power loss may lose the last commits but never corrupts the file), ``FULL`` (each
commit is also flushed to the disk: power-loss durability, at the cost of a flush per
step) or ``EXTRA``.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
from pathlib import Path

from kestrel_protocol.sqlite_files import transaction, use_wal

__all__ = [
    "CHECKPOINT_EVERY",
    "SCHEMA_VERSION",
    "SYNCHRONOUS_ENV",
    "Checkpointer",
    "open_database",
]

log = logging.getLogger(__name__)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS artifacts (
    root TEXT PRIMARY KEY,
    body BLOB NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS sessions (
    n INTEGER PRIMARY KEY,  -- the order sessions were opened in
    id TEXT NOT NULL UNIQUE,
    principal TEXT NOT NULL,
    scenario_id TEXT NOT NULL,
    scenario_root TEXT NOT NULL,
    label TEXT NOT NULL,
    status TEXT NOT NULL,
    record_root TEXT,
    grade_root TEXT,
    UNIQUE (principal, scenario_root, label)
);
CREATE INDEX IF NOT EXISTS sessions_by_grade ON sessions (grade_root);
CREATE TABLE IF NOT EXISTS owners (  -- whose artifact a root is: a session that made it
    root TEXT NOT NULL,
    session TEXT NOT NULL,
    PRIMARY KEY (root, session)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS journal (
    session TEXT NOT NULL,
    seq INTEGER NOT NULL,  -- row 0 holds the opening frame's root
    source TEXT NOT NULL,  -- the submitted source ('' in row 0)
    pentad_root TEXT NOT NULL,  -- '' in row 0
    frame_root TEXT NOT NULL,  -- the frame the submission produced (row 0: the opening one)
    PRIMARY KEY (session, seq)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS lookahead (
    n INTEGER PRIMARY KEY,  -- the order things were seen in
    session TEXT NOT NULL,
    seq INTEGER NOT NULL,  -- the session's seq then (the read came after that submission)
    bar INTEGER NOT NULL,  -- its clock bar then
    what TEXT NOT NULL  -- 'unsealed' (served while its scenario was not sealed) or the read
);
CREATE INDEX IF NOT EXISTS lookahead_session ON lookahead (session, n);
CREATE TABLE IF NOT EXISTS horizons (  -- per (principal, scenario): the furthest bar shown
    principal TEXT NOT NULL,
    scenario TEXT NOT NULL,
    bar INTEGER NOT NULL,  -- -1 until a bar is shown
    what TEXT NOT NULL,  -- what showed it
    sessions INTEGER NOT NULL,  -- sessions the principal opened on the scenario
    PRIMARY KEY (principal, scenario)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS operations (  -- grade tokens any process can resume
    token TEXT PRIMARY KEY,
    principal TEXT NOT NULL,
    session TEXT NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS session_times (  -- the operator's dates, in no object or root
    session TEXT PRIMARY KEY,
    closed_at TEXT,  -- UTC, by the database's clock when the session closed
    pruned_at TEXT  -- when its steps were pruned (kestrel prune)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS feed_bars (  -- a forward tape's published bars
    scenario TEXT NOT NULL,
    bar INTEGER NOT NULL,  -- the bar's index in the whole tape (a prefix's bars first)
    bar_time TEXT NOT NULL,
    bar_rows TEXT NOT NULL,  -- its canonical tape rows, every symbol, LF-ended
    prefix_root TEXT NOT NULL,  -- the root of the tape's prefix ending with it
    published_at TEXT NOT NULL,  -- UTC, the publisher's clock: in no object or root
    PRIMARY KEY (scenario, bar)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS feeds (  -- a forward tape's window
    scenario TEXT PRIMARY KEY,
    frozen INTEGER NOT NULL,  -- 1: the window is over, the tape fixed
    unsealed INTEGER NOT NULL  -- 1: the tape is published
) WITHOUT ROWID;
"""

SCHEMA_VERSION = "7"
"""7: the journal keyed (session, seq) as PostgreSQL's is, and no step files (6)."""
CHECKPOINT_EVERY = 1000
"""Commits between background checkpoints."""
SYNCHRONOUS_ENV = "KESTREL_SQLITE_SYNCHRONOUS"
_BACKSTOP_PAGES = 50_000


def _statements(script: str) -> list[str]:
    """Split a schema script into statements (trigger bodies kept whole)."""
    out: list[str] = []
    pending = ""
    for line in script.splitlines(keepends=True):
        pending += line
        if sqlite3.complete_statement(pending):
            out.append(pending.strip())
            pending = ""
    return out


def open_database(conn: sqlite3.Connection, lock: threading.RLock) -> str:
    """Set ``conn``'s pragmas and create the schema if the file is new (``lock`` held);
    the file's schema version, which the caller checks against :data:`SCHEMA_VERSION`."""
    sync = os.environ.get(SYNCHRONOUS_ENV, "NORMAL").upper()
    if sync not in {"NORMAL", "FULL", "EXTRA"}:
        sync = "NORMAL"
    conn.execute("PRAGMA busy_timeout = 30000")
    use_wal(conn)  # several processes may be opening a new file at once
    conn.execute(f"PRAGMA synchronous = {sync}")
    conn.execute(f"PRAGMA wal_autocheckpoint = {_BACKSTOP_PAGES}")
    with transaction(conn, lock):
        for statement in _statements(_SCHEMA):
            conn.execute(statement)
        conn.execute(
            "INSERT OR IGNORE INTO meta (key, value) VALUES ('schema', ?)", (SCHEMA_VERSION,)
        )
        found = conn.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
    return str(found[0])


class Checkpointer:
    """A daemon thread that runs passive WAL checkpoints when asked."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self._wake = threading.Event()
        self._stopping = False
        self._thread: threading.Thread | None = None

    def request(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._run, name="kestrel-checkpoint", daemon=True
            )
            self._thread.start()
        self._wake.set()

    def stop(self) -> None:
        self._stopping = True
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=30)

    def _run(self) -> None:
        conn = sqlite3.connect(self._path, isolation_level=None, timeout=30.0)
        try:
            conn.execute("PRAGMA busy_timeout = 30000")
            while True:
                self._wake.wait()
                self._wake.clear()
                if self._stopping:
                    return
                try:
                    conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
                except sqlite3.Error as exc:  # the backstop still checkpoints
                    log.warning("background checkpoint of %s failed: %s", self._path, exc)
        finally:
            conn.close()
