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
SQLite store checkpoints on the same thread (:class:`kestrel_protocol.wal_checkpoints.
WalCheckpointer`), except that a checkpoint past its restart mark finishes with its
store's lock held so that its WAL starts over; here that would stall the event loop,
every request in flight waiting, so the door's WAL is left to the backstop. What is durable when is
unchanged: a commit is in the WAL when it returns, the checkpoint only moves it into the
file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

from kestrel_protocol.wal_checkpoints import WalCheckpointer

__all__ = ["BACKSTOP_PAGES", "CHECKPOINT_EVERY", "WalCheckpoints"]

CHECKPOINT_EVERY: Final = 1000
"""Audit rows between background checkpoints."""
BACKSTOP_PAGES: Final = 50_000
"""SQLite's own auto-checkpoint on the serving connection: only if the thread falls behind."""


class WalCheckpoints(WalCheckpointer):
    """Counts commits and, every :data:`CHECKPOINT_EVERY`, asks the checkpoint thread
    (started on the first) for a passive checkpoint; ``runs`` counts those it ran."""

    def __init__(self, path: Path, every: int = CHECKPOINT_EVERY) -> None:
        super().__init__(path, "kestrel-door-checkpoint")
        self._every = every
        self._commits = 0

    def committed(self, rows: int = 1) -> None:
        """``rows`` more audit rows committed on the serving connection."""
        self._commits += rows
        if self._commits < self._every:
            return
        self._commits = 0
        self.request()
