"""The SQLite store's session rows and what hangs off them, apart from the journal.

A session's row (its scenario, label, status, record and grade), the reads it was
served that held bars after its clock (lookahead), and the operation tokens that resume
its grade in any process. :class:`Sessions` shares the store's connection and lock.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable
from contextlib import AbstractContextManager

from kestrel_protocol.store import SessionRow

from ..store_rows import lookahead_reads

__all__ = ["OWN", "Sessions"]

OWN = "INSERT OR IGNORE INTO owners (root, session) VALUES (?, ?)"
"""Remember a root as an artifact of a session (its rowid): whose artifact it is."""
_SESSION = (
    "SELECT id, principal, scenario_id, scenario_root, label, status, record_root,"
    " grade_root FROM sessions"
)


class Sessions:
    """Sessions, grades, lookahead reads and operation tokens in the store's file."""

    def __init__(
        self,
        conn: sqlite3.Connection,
        lock: threading.RLock,
        transaction: Callable[[], AbstractContextManager[sqlite3.Connection]],
    ) -> None:
        self._conn = conn
        self._lock = lock
        self._transaction = transaction

    def session(self, session_id: str) -> SessionRow | None:
        with self._lock:
            row = self._conn.execute(_SESSION + " WHERE id = ?", (session_id,)).fetchone()
        return SessionRow(*row) if row is not None else None

    def graded_session(self, grade_root: str, principal: str | None = None) -> SessionRow | None:
        """The session whose grade is ``grade_root`` (only among ``principal``'s when
        given; another's is ``None`` by the same query as an unknown root)."""
        query = _SESSION + " WHERE grade_root = ?1"
        if principal is not None:
            query += " AND principal = ?2"
        args = (grade_root,) if principal is None else (grade_root, principal)
        with self._lock:
            row = self._conn.execute(query, args).fetchone()
        return SessionRow(*row) if row is not None else None

    def sessions(self, status: str | None = None) -> list[SessionRow]:
        query = _SESSION
        args: tuple[str, ...] = ()
        if status is not None:
            query += " WHERE status = ?"
            args = (status,)
        with self._lock:
            found = self._conn.execute(query + " ORDER BY rowid", args).fetchall()
        return [SessionRow(*row) for row in found]

    def labels(self, principal: str, scenario_root: str) -> set[str]:
        with self._lock:
            found = self._conn.execute(
                "SELECT label FROM sessions WHERE principal = ? AND scenario_root = ?",
                (principal, scenario_root),
            ).fetchall()
        return {str(row[0]) for row in found}

    def insert_session(self, row: SessionRow) -> bool:
        """Insert a new session; ``False`` when its id already exists (a concurrent open)."""
        with self._transaction() as conn:
            cursor = conn.execute(
                "INSERT OR IGNORE INTO sessions (id, principal, scenario_id, scenario_root,"
                " label, status, record_root, grade_root) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    row.id,
                    row.principal,
                    row.scenario_id,
                    row.scenario_root,
                    row.label,
                    row.status,
                    row.record_root,
                    row.grade_root,
                ),
            )
            return cursor.rowcount == 1

    def set_grade(self, session_id: str, owner: int, grade_root: str, body: bytes) -> None:
        """Store a grade and remember it as the session's grade (``owner``: its rowid)."""
        with self._transaction() as conn:
            conn.execute(
                "INSERT OR REPLACE INTO artifacts (root, body) VALUES (?, ?)", (grade_root, body)
            )
            conn.execute(OWN, (grade_root, owner))
            conn.execute(
                "UPDATE sessions SET grade_root = ? WHERE id = ?", (grade_root, session_id)
            )

    # -- lookahead ------------------------------------------------------------------------

    def note_unsealed(self, session_id: str) -> None:
        """Remember (once) that the session was served while its scenario was not sealed."""
        with self._transaction() as conn:
            conn.execute(
                "INSERT INTO lookahead (session, seq, bar, what) SELECT ?, 0, 0, 'unsealed'"
                " WHERE NOT EXISTS (SELECT 1 FROM lookahead WHERE session = ?"
                " AND what = 'unsealed')",
                (session_id, session_id),
            )

    def add_read(self, session_id: str, seq: int, bar: int, what: str) -> None:
        """Remember a read that held bars after the session's clock (``bar``) at ``seq``."""
        with self._transaction() as conn:
            conn.execute(
                "INSERT INTO lookahead (session, seq, bar, what) VALUES (?, ?, ?, ?)",
                (session_id, seq, bar, what),
            )

    def lookahead(self, session_id: str) -> tuple[bool, list[tuple[int, int, str]]]:
        """Whether the session was ever served unsealed, and its reads (seq, bar, what)
        in the order they happened."""
        with self._lock:
            found = self._conn.execute(
                "SELECT seq, bar, what FROM lookahead WHERE session = ? ORDER BY n",
                (session_id,),
            ).fetchall()
        return lookahead_reads(found)

    # -- operations -------------------------------------------------------------------

    def put_operation(self, token: str, principal: str, session_id: str) -> None:
        """Remember whose and which session's grade ``token`` resumes (idempotent)."""
        with self._transaction() as conn:
            conn.execute(
                "INSERT OR IGNORE INTO operations (token, principal, session) VALUES (?, ?, ?)",
                (token, principal, session_id),
            )

    def operation(self, token: str) -> tuple[str, str] | None:
        """The (principal, session id) of an operation token, or ``None``."""
        with self._lock:
            row = self._conn.execute(
                "SELECT principal, session FROM operations WHERE token = ?", (token,)
            ).fetchone()
        return None if row is None else (str(row[0]), str(row[1]))
