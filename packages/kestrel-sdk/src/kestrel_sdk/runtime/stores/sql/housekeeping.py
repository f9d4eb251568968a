"""Housekeeping over SQL, said once for SQLite and PostgreSQL (a part of
:class:`.store.SqlStore`): what every session occupies, and pruning or discarding a
closed, graded session's rows in one transaction; re-keying the horizon rows an upgraded
store set apart (and giving its sessions their lineage); the sessions of a lineage.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, ClassVar

from kestrel_protocol.sql import Connection, SqlAdapter
from kestrel_protocol.store import Adopted, Reached, StoredSession

from .statements import Statements

__all__ = ["SqlHousekeeping"]


class SqlHousekeeping(SqlAdapter):
    """The housekeeping methods of the ``RuntimeStore`` port over SQL."""

    sql: ClassVar[Statements]

    def stored_sessions(self) -> list[StoredSession]:
        """Every session, in the order they were opened, with its dates and what its
        steps occupy."""
        with self._connection() as conn:
            rows = conn.execute(self.sql.stored_sessions).fetchall()
        return [_stored(row) for row in rows]

    def pruned(self, session_id: str) -> str | None:
        """When the session's steps were pruned (UTC text), or ``None``."""
        with self._connection() as conn:
            row = conn.execute(self.sql.pruned_at, (session_id,)).fetchone()
        return None if row is None or row[0] is None else str(row[0])

    def prune(self, session_id: str) -> bool:
        """Remove a closed, graded session's steps in one transaction and mark it pruned
        (see ``RuntimeStore``); ``False``, and nothing changed, for any other session."""
        sql = self.sql
        with self._transaction() as conn:
            if not self._proved(conn, session_id):
                return False
            done = conn.execute(sql.pruned_at, (session_id,)).fetchone()
            if done is not None and done[0] is not None:
                return False
            self._drop_steps(conn, session_id)
            conn.execute(sql.stamp_pruned, (session_id,))
        return True

    def _proved(self, conn: Connection, session_id: str) -> bool:
        """Whether the session is closed and graded, its row locked for the caller's
        transaction (what ``prune`` and ``discard`` ask first)."""
        sql = self.sql
        locked = conn.execute(sql.lock_session, (session_id,)).fetchone()
        row = conn.execute(sql.session, (session_id,)).fetchone()
        return not (locked is None or row is None or locked[0] != "closed" or row[7] is None)

    def _drop_steps(self, conn: Connection, session_id: str) -> None:
        """Delete a session's steps: its pentads, their owner rows, its journal, lookahead
        reads and grade tokens (in the caller's transaction)."""
        sql = self.sql
        conn.execute(sql.prune_pentads, (session_id, session_id))
        conn.execute(sql.prune_owners, (session_id, session_id))
        for statement in (sql.prune_journal, sql.prune_lookahead, sql.prune_operations):
            conn.execute(statement, (session_id,))

    def discard(self, session_id: str) -> bool:
        """Forget a closed, graded session whole in one transaction (see
        ``RuntimeStore``); ``False``, and nothing changed, for any other session."""
        sql = self.sql
        with self._transaction() as conn:
            if not self._proved(conn, session_id):
                return False
            self._drop_steps(conn, session_id)
            conn.execute(sql.discard_artifacts, (session_id, session_id))
            for statement in (sql.discard_owners, sql.discard_times, sql.discard_session):
                conn.execute(statement, (session_id,))
        return True

    def reclaim(self) -> None:
        """Give the space pruning freed back (the adapter's way)."""
        raise NotImplementedError

    def footprint(self) -> int:
        """Bytes the store occupies on disk (the adapter's measure)."""
        raise NotImplementedError

    def adopt_horizons(self, keys: Callable[[], Mapping[str, str]]) -> list[Adopted]:
        """Re-key the rows set apart by the upgrade whose ids ``keys()`` maps (the
        sessions counted on each before given its key), in one transaction; each taken by
        one process (its delete returns it), so replicas adopting at once never add a row
        twice. See ``RuntimeStore``."""
        sql = self.sql
        with self._connection() as conn:
            if conn.execute(sql.any_unkeyed).fetchone() is None:
                return []  # a store made since, or its rows all adopted
            waiting = conn.execute(sql.unkeyed).fetchall()
        by_id = keys()
        rows = [(principal, i) for principal, i in waiting if i in by_id]
        adopted: list[Adopted] = []
        if not rows:
            return adopted
        with self._transaction() as conn:
            for principal, scenario_id in rows:
                taken = conn.execute(sql.take_unkeyed, (principal, scenario_id)).fetchall()
                if not taken:
                    continue  # adopted by another process meanwhile
                bar, what, sessions = taken[0]
                key = by_id[scenario_id]
                unbarred = conn.execute(sql.unbarred, (principal, scenario_id)).fetchall()
                conn.execute(sql.line_sessions, (key, principal, scenario_id))
                row = (principal, key, bar, what, sessions)
                total = int(conn.execute(sql.adopt_horizon, row).fetchall()[0][0])
                joined = bool(sessions) and total > sessions  # both rows' sessions compared
                named = tuple(str(sid) for (sid,) in unbarred)
                adopted.append(Adopted(principal, scenario_id, joined, named))
        return adopted

    def keep_bar(self, session_id: str, bar: int) -> None:
        """Write ``bar`` into the session's last journal row where it keeps none (see
        ``RuntimeStore``)."""
        with self._transaction() as conn:
            conn.execute(self.sql.keep_bar, (bar, session_id, session_id))

    def reached(self, principal: str, key: str) -> list[Reached]:
        """The principal's sessions on the lineage ``key``, each with the bar its last
        journal row keeps (one read: no session is replayed)."""
        with self._connection() as conn:
            rows = conn.execute(self.sql.reached, (principal, key)).fetchall()
        return [
            Reached(str(sid), str(scenario), str(label), status == "closed", bar)
            for sid, scenario, label, status, bar in rows
        ]


def _stored(row: Any) -> StoredSession:
    """A row of ``stored_sessions``: the session, its dates, its journal rows and the
    bytes of its journal, pentad and owner rows."""
    sid, principal, scenario, status, grade, closed, pruned, steps, *sizes = row
    return StoredSession(
        id=str(sid),
        principal=str(principal),
        scenario_id=str(scenario),
        status=str(status),
        graded=grade is not None,
        closed_at=closed,
        pruned_at=pruned,
        steps=int(steps),
        step_bytes=sum(int(size) for size in sizes),
    )
