"""The SQLite store's horizons: per (principal, scenario), the furthest bar shown.

One row per pair, read and raised by its primary key: O(1) per read and per submission
whatever the number of sessions in the store (see :mod:`..horizon`). Every read goes to
the database, so a horizon another process raised is seen by the next submission here:
SQLite (WAL) is the only thing shared between processes, no file beside it.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable
from contextlib import AbstractContextManager

from kestrel_protocol.store import Horizon

__all__ = ["HORIZONS_SCHEMA", "Horizons"]

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


class Horizons:
    """Horizons in the store's file (sharing its connection, lock and transactions)."""

    def __init__(
        self,
        conn: sqlite3.Connection,
        lock: threading.RLock,
        transaction: Callable[[], AbstractContextManager[sqlite3.Connection]],
    ) -> None:
        self._conn = conn
        self._lock = lock
        self._transaction = transaction

    def horizon(self, principal: str, scenario_id: str) -> Horizon | None:
        with self._lock:
            row = self._conn.execute(
                "SELECT bar, what, sessions FROM horizons WHERE principal = ? AND scenario = ?",
                (principal, scenario_id),
            ).fetchone()
        return None if row is None else Horizon(int(row[0]), str(row[1]), int(row[2]))

    def raise_horizon(self, principal: str, scenario_id: str, bar: int, what: str) -> None:
        with self._transaction() as conn:
            conn.execute(_RAISE, (principal, scenario_id, bar, what))

    def count_session(self, principal: str, scenario_id: str) -> int:
        with self._transaction() as conn:
            row = conn.execute(_COUNT, (principal, scenario_id)).fetchone()
        return int(row[0])
