"""The SQLite store's horizons: per (principal, scenario), the furthest bar shown.

One row per pair, read and raised by its primary key: O(1) per read and per submission
whatever the number of sessions in the store (see :mod:`..horizon`).

Every submission reads its principal's horizon, and the step path otherwise runs no SQL
(a step is one line in its step file), so rows read are remembered and served again
while the horizons are unchanged: ``kestrel.db.horizons`` (8 bytes, mapped into memory)
holds a generation that every write of a horizon, in any process, moves on after its
commit, under an exclusive ``flock`` of that file (so no two writers' moves are lost);
on a file system that refuses a shared mapping it is read with ``pread``.
A read compares the generation (a memory read) with the one its remembered rows were
read at; when it moved, the rows are read again. A write committed after a read took
the generation moves it again, so nothing stale is served twice.
"""

from __future__ import annotations

import fcntl
import logging
import mmap
import os
import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

from kestrel_protocol.store import Horizon

__all__ = ["HORIZONS_SCHEMA", "Horizons"]

log = logging.getLogger(__name__)

HORIZONS_SCHEMA = """
CREATE TABLE IF NOT EXISTS horizons (  -- per (principal, scenario): the furthest bar shown
    principal TEXT NOT NULL,
    scenario TEXT NOT NULL,
    bar INTEGER NOT NULL,  -- -1 until a bar is shown
    what TEXT NOT NULL,  -- what showed it
    sessions INTEGER NOT NULL,  -- sessions the principal opened on the scenario
    PRIMARY KEY (principal, scenario)
) WITHOUT ROWID;
"""
_RAISE = (
    "INSERT INTO horizons (principal, scenario, bar, what, sessions) VALUES (?, ?, ?, ?, 0)"
    " ON CONFLICT (principal, scenario) DO UPDATE SET bar = excluded.bar, what = excluded.what"
    " WHERE excluded.bar > horizons.bar"
)
_COUNT = (
    "INSERT INTO horizons (principal, scenario, bar, what, sessions) VALUES (?, ?, -1, '', 1)"
    " ON CONFLICT (principal, scenario) DO UPDATE SET sessions = horizons.sessions + 1"
    " RETURNING sessions"
)


_REMEMBERED = 4096  # rows remembered at most (then forgotten all at once)
_UNREAD = Horizon(-2, "(not read)", -1)  # a marker no row equals


class Horizons:
    """Horizons in the store's file (sharing its connection, lock and transactions);
    ``signal`` is the generation file beside it."""

    def __init__(
        self,
        conn: sqlite3.Connection,
        lock: threading.RLock,
        transaction: Callable[[], AbstractContextManager[sqlite3.Connection]],
        signal: Path,
    ) -> None:
        self._conn = conn
        self._lock = lock
        self._transaction = transaction
        self._fd = os.open(signal, os.O_RDWR | os.O_CREAT, 0o600)
        fcntl.flock(self._fd, fcntl.LOCK_EX)
        try:
            if os.fstat(self._fd).st_size < 8:
                os.ftruncate(self._fd, 8)
        finally:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
        self._map: mmap.mmap | None = None
        try:
            self._map = mmap.mmap(self._fd, 8)
        except OSError as exc:  # a file system without shared mappings: pread, pwrite
            log.info("horizons: %s is read with pread (no shared mapping: %s)", signal, exc)
        self._generation = b""  # the generation ``_rows`` were read at (its 8 bytes)
        self._rows: dict[tuple[str, str], Horizon | None] = {}

    def close(self) -> None:
        """Release the generation file (idempotent)."""
        if self._fd >= 0:
            if self._map is not None:
                self._map.close()
            os.close(self._fd)
            self._fd = -1

    def _now(self) -> bytes:
        """The generation now (its 8 bytes)."""
        mapped = self._map
        return mapped[:8] if mapped is not None else os.pread(self._fd, 8, 0)

    def horizon(self, principal: str, scenario_id: str) -> Horizon | None:
        key = (principal, scenario_id)
        # the step path: a row remembered at the current generation, without the lock
        if self._now() == self._generation:
            found = self._rows.get(key, _UNREAD)
            if found is not _UNREAD:  # identity: a marker, not a row
                return found
        with self._lock:
            generation = self._now()
            if generation != self._generation or len(self._rows) >= _REMEMBERED:
                self._rows.clear()
                self._generation = generation
            row = self._conn.execute(
                "SELECT bar, what, sessions FROM horizons WHERE principal = ? AND scenario = ?",
                key,
            ).fetchone()
            found = None if row is None else Horizon(int(row[0]), str(row[1]), int(row[2]))
            self._rows[key] = found
            return found

    def raise_horizon(self, principal: str, scenario_id: str, bar: int, what: str) -> None:
        with self._moving(), self._transaction() as conn:
            conn.execute(_RAISE, (principal, scenario_id, bar, what))

    def count_session(self, principal: str, scenario_id: str) -> int:
        with self._moving(), self._transaction() as conn:
            row = conn.execute(_COUNT, (principal, scenario_id)).fetchone()
        return int(row[0])

    @contextmanager
    def _moving(self) -> Iterator[None]:
        """A write: its commit, then the generation moved on (one writer at a time)."""
        with self._lock:
            fcntl.flock(self._fd, fcntl.LOCK_EX)
            try:
                yield
            finally:
                moved = (int.from_bytes(self._now(), "little") + 1) % (1 << 63)
                if self._map is not None:
                    self._map[:8] = moved.to_bytes(8, "little")
                else:
                    os.pwrite(self._fd, moved.to_bytes(8, "little"), 0)
                fcntl.flock(self._fd, fcntl.LOCK_UN)
