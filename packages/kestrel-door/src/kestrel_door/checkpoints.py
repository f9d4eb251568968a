"""The door file's WAL checkpoints, on a thread of their own rather than the event loop.

Every ``/v1`` and ``/mcp`` call commits an audit row to ``door.db`` on the door's event
loop. With SQLite's auto-checkpoint (every 1,000 pages of WAL: about 500 rows, an audit
row writing two pages) the commit that crossed the mark copied the WAL back into the
file and flushed both to the disk: 4-18 ms measured on this machine, every request in
flight waiting. Here the serving store asks a daemon thread, with its own connection,
for a passive checkpoint every :data:`CHECKPOINT_EVERY` audit rows (a passive checkpoint
waits for no reader or writer), and SQLite's own auto-checkpoint stays on, far higher,
as a backstop: while calls never pause the WAL cannot start over (a passive checkpoint
never takes the rows committed while it runs), so it grows to :data:`BACKSTOP_PAGES`
pages (about 200 MB) and the commit there checkpoints once and starts it over: at 1,500
calls a second, one such commit in 17 s where there were three a second. The runtime's
SQLite store checkpoints the same way (its own copy: the door's library does not import
the runtime), except that every fourth of its checkpoints finishes with its store's lock
held so that its WAL starts over; here that would stall the event loop, every request in
flight waiting, so the door's WAL is left to the backstop. What is durable when is
unchanged: a commit is in the WAL when it returns, the checkpoint only moves it into the
file.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from pathlib import Path
from typing import Final

__all__ = ["BACKSTOP_PAGES", "CHECKPOINT_EVERY", "WalCheckpoints"]

logger = logging.getLogger(__name__)

CHECKPOINT_EVERY: Final = 1000
"""Audit rows between background checkpoints."""
BACKSTOP_PAGES: Final = 50_000
"""SQLite's own auto-checkpoint on the serving connection: only if the thread falls behind."""


class WalCheckpoints:
    """Counts commits and, every :data:`CHECKPOINT_EVERY`, wakes a daemon thread (started
    on the first) that runs ``PRAGMA wal_checkpoint(PASSIVE)`` on its own connection."""

    def __init__(self, path: Path, every: int = CHECKPOINT_EVERY) -> None:
        self._path = path
        self._every = every
        self._commits = 0
        self._wake = threading.Event()
        self._stopping = False
        self._thread: threading.Thread | None = None
        self.runs = 0
        """Checkpoints the thread has run."""

    def committed(self, rows: int = 1) -> None:
        """``rows`` more audit rows committed on the serving connection."""
        self._commits += rows
        if self._commits < self._every:
            return
        self._commits = 0
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._run, name="kestrel-door-checkpoint", daemon=True
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
            while True:
                self._wake.wait()
                self._wake.clear()
                if self._stopping:
                    return
                try:
                    conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
                    self.runs += 1
                except sqlite3.Error as exc:  # the backstop still checkpoints
                    logger.warning("background checkpoint of %s failed: %s", self._path, exc)
        finally:
            conn.close()
