"""The ``RuntimeStore`` port over an SQL database, said once for SQLite and PostgreSQL.

:class:`SqlStore` runs :mod:`.statements` (rendered by the adapter's :mod:`.dialect`) on
the connections its adapter gives it: :meth:`SqlStore._connection` for a single
statement, committed on its own, :meth:`SqlStore._transaction` for several committed
together (seq 1 with row 0, a stand-down with its status, a close), and
:meth:`SqlStore._marking` for a step with what it marks by its horizon row. What it
derives from the rows it reads is :mod:`..rows`'s, as the memory store's is; its
forward tapes are :mod:`.feed`'s, its housekeeping (prune, discard) :mod:`.housekeeping`'s.

Durability: an accepted submission is committed before :meth:`SqlStore.append` returns,
with what it marks; what survives a crash of the machine rather than the process is the
database's setting (SQLite: ``synchronous``; PostgreSQL: ``synchronous_commit``).
"""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import AbstractContextManager, nullcontext
from typing import Any, ClassVar

from kestrel_protocol import canonical_json
from kestrel_protocol.sql import Connection
from kestrel_protocol.store import (
    ArtifactStatus,
    Horizon,
    JournalConflict,
    JournalEntry,
    SessionHead,
    SessionRow,
    StepMarks,
)

from ...artifacts import checked_root, verified_artifact
from ...pentads import stored_pentad_bytes
from ..rows import closing_rows, journal_entries, lookahead_reads
from .feed import SqlFeeds
from .housekeeping import SqlHousekeeping
from .statements import Statements

__all__ = ["SqlStore"]


class SqlStore(SqlFeeds, SqlHousekeeping):
    """The ``RuntimeStore`` port's logic over SQL; an adapter supplies the connections."""

    sql: ClassVar[Statements]
    """The statements in the adapter's dialect."""
    duplicate: ClassVar[tuple[type[Exception], ...]]
    """What the driver raises on a duplicate key (a taken seq) or a null one (a step's
    append refused: its session closed, gone, or not at the frame it was applied to)."""

    def _reading(self) -> AbstractContextManager[Connection]:
        """A read's way in (one statement or a few, none writing): :meth:`_connection`,
        unless the adapter has one that never waits behind a write (SQLite's, while
        another thread holds its connection)."""
        return self._connection()

    def _many(self, conn: Connection, statement: str, rows: list[tuple[Any, ...]]) -> None:
        """Run ``statement`` once per row (in the caller's transaction)."""
        for row in rows:
            conn.execute(statement, row)

    # -- artifacts ----------------------------------------------------------------------

    def put(self, obj: Mapping[str, Any]) -> str:
        """Store ``obj``'s canonical bytes under its root; idempotent. An object carrying
        a ``root`` member that is not the root of its content is refused: the store
        never holds a lie."""
        root = checked_root(obj)
        self.put_raw(root, canonical_json(obj))
        return root

    def put_raw(self, root: str, body: bytes) -> None:
        """Store bytes the caller already canonicalised and hashed."""
        with self._connection() as conn:
            conn.execute(self.sql.put, (root, body))

    def lookup(
        self, root: str, principal: str | None = None
    ) -> tuple[dict[str, Any] | None, ArtifactStatus]:
        """The stored object and whether it was found intact.

        With ``principal``, only an artifact of one of that principal's sessions is
        found: another's is ``missing``, by the same queries as a root never stored (so
        neither the answer nor the path says it exists). An open session's pentad is
        rebuilt from its journal row. Bytes that do not hash to their root are logged as
        corrupt and not returned.
        """
        sql = self.sql
        with self._reading() as conn:
            if principal is None:
                row = conn.execute(sql.body, (root,)).fetchone()
            else:
                row = conn.execute(sql.owned_body, (root, root, principal)).fetchone()
            if row is not None:
                body = bytes(row[0])
            else:  # a pentad of a session not yet closed
                if principal is None:
                    found = conn.execute(sql.journal_pentad, (root,)).fetchone()
                else:
                    found = conn.execute(sql.owned_journal_pentad, (root, principal)).fetchone()
                if found is None:
                    return None, "missing"
                sid, seq, source, prev = found
                body = b"" if prev is None else stored_pentad_bytes(sid, seq, prev, source)
        return verified_artifact(root, body, self.location)

    def get(self, root: str) -> dict[str, Any] | None:
        """The object verbatim, or ``None`` when absent or corrupt."""
        return self.lookup(root)[0]

    def has(self, root: str) -> bool:
        """Whether an intact object is stored under ``root``."""
        return self.lookup(root)[1] == "ok"

    # -- sessions -----------------------------------------------------------------------

    def session(self, session_id: str) -> SessionRow | None:
        with self._reading() as conn:
            row = conn.execute(self.sql.session, (session_id,)).fetchone()
        return SessionRow(*row) if row is not None else None

    def graded_session(self, grade_root: str, principal: str | None = None) -> SessionRow | None:
        """The session whose grade is ``grade_root`` (only among ``principal``'s when
        given; another's is ``None`` by the same query as an unknown root)."""
        with self._connection() as conn:
            if principal is None:
                row = conn.execute(self.sql.graded, (grade_root,)).fetchone()
            else:
                row = conn.execute(self.sql.owned_graded, (grade_root, principal)).fetchone()
        return SessionRow(*row) if row is not None else None

    def sessions(self, status: str | None = None) -> list[SessionRow]:
        """Every session (with ``status`` when given), in the order they were opened."""
        with self._connection() as conn:
            if status is None:
                rows = conn.execute(self.sql.sessions).fetchall()
            else:
                rows = conn.execute(self.sql.sessions_with, (status,)).fetchall()
        return [SessionRow(*row) for row in rows]

    def sessions_of(self, principal: str) -> list[SessionRow]:
        """The principal's sessions, in the order they were opened."""
        with self._connection() as conn:
            rows = conn.execute(self.sql.sessions_of, (principal,)).fetchall()
        return [SessionRow(*row) for row in rows]

    def labels(self, principal: str, scenario_root: str) -> set[str]:
        with self._connection() as conn:
            rows = conn.execute(self.sql.labels, (principal, scenario_root)).fetchall()
        return {str(row[0]) for row in rows}

    def insert_session(self, row: SessionRow) -> bool:
        """Insert a new session; ``False`` when its id already exists (a concurrent open)."""
        values = (
            row.id,
            row.principal,
            row.scenario_id,
            row.scenario_root,
            row.label,
            row.status,
            row.record_root,
            row.grade_root,
        )
        with self._connection() as conn:
            return int(conn.execute(self.sql.insert_session, values).rowcount) == 1

    # -- the journal --------------------------------------------------------------------

    def head(self, session_id: str) -> SessionHead | None:
        """The session's last seq, status and frame root; ``None`` when there is no such
        session."""
        with self._reading() as conn:
            row = conn.execute(self.sql.head, (session_id,)).fetchone()
        if row is None:
            return None
        return SessionHead(int(row[1] or 0), str(row[0]), None if row[2] is None else str(row[2]))

    def append(
        self,
        session_id: str,
        seq: int,
        source: str,
        pentad_root: str,
        frame_root: str,
        *,
        prev: str,
        status: str | None = None,
        clock: int | None = None,
        horizon: tuple[str, str] | None = None,
        marks: StepMarks | None = None,
    ) -> Horizon | None:
        """Persist one accepted submission, committed before this returns; with
        ``horizon`` (principal, key), that horizon row read after the journal row, on the
        same connection (a step's second statement: one pool checkout, one lock hold),
        and with ``marks``, what the step marks by it written in the row's transaction
        (:meth:`_marking`; the SQLite adapter writes them itself), so that a process
        killed after the commit leaves no accepted step unmarked.

        With ``marks`` the row is read locked until the step commits (``lock_horizon``:
        ``FOR UPDATE`` on PostgreSQL), which makes a read before the commit sound across
        processes: see :mod:`kestrel_sdk.runtime.horizon`.

        ``prev`` (the frame root the submission was applied to) is stored only with
        seq 1, as row 0; a later one must be the previous row's frame root. ``clock``
        (the bar the step reached) is one more value of the row (``RuntimeStore.reached``).
        A taken seq, a session closed meanwhile, or a ``prev`` that is not the session's
        last frame (another session under the same id) raises ``JournalConflict`` and
        writes nothing.
        """
        sql = self.sql
        read = sql.horizon if marks is None else sql.lock_horizon
        try:
            with nullcontext() if marks is None else self._marking():
                if seq == 1 or status is not None:
                    row = (session_id, seq, source, pentad_root, frame_root, clock)
                    self._append_with_status(row, prev, status)
                    if horizon is None:
                        return None
                    with self._connection() as conn:
                        found = conn.execute(read, horizon).fetchone()
                else:
                    with self._connection() as conn:
                        conn.execute(
                            sql.append,
                            (
                                session_id,
                                session_id,
                                seq - 1,
                                prev,
                                seq,
                                source,
                                pentad_root,
                                frame_root,
                                clock,
                            ),
                        )
                        if horizon is None:
                            return None
                        found = conn.execute(read, horizon).fetchone()
                if found is None:
                    return None
                # (bar, what, sessions): an integer, a text and an integer in every dialect
                shown = Horizon(*found)
                if marks is not None:
                    marks.mark(shown)
        except self.duplicate:
            raise JournalConflict(
                f"session {session_id} already has seq {seq}, is closed or gone, or is not"
                f" at frame {prev}"
            ) from None
        return shown

    def _marking(self) -> AbstractContextManager[Connection]:
        """The transaction of a step with marks, which the statements its marks make
        (``add_read``, ``raise_horizon``) join: the adapter's (never entered on SQLite,
        whose ``append`` writes its marks in its own transaction)."""
        return self._transaction()

    def _append_with_status(
        self, row: tuple[str, int, str, str, str, int | None], prev: str, status: str | None
    ) -> None:
        """Seq 1 (with row 0: ``prev``), or a step that changed the session's status
        (applied to its last frame, ``prev``): the row and the status in one transaction."""
        session_id, seq = row[0], row[1]
        sql = self.sql
        with self._transaction() as conn:
            updated = conn.execute(sql.change_status, (status, session_id))
            if updated.rowcount != 1:
                raise JournalConflict(f"session {session_id} is closed or gone")
            if seq == 1:
                conn.execute(sql.append_row, (session_id, 0, "", "", prev, None))
            elif conn.execute(sql.follows, (session_id, seq - 1, prev)).fetchone() is None:
                raise JournalConflict(f"session {session_id} is not at frame {prev}")
            conn.execute(sql.append_row, row)

    def journal(self, session_id: str, after: int = 0) -> list[JournalEntry]:
        """A session's accepted submissions after seq ``after``, in order (each with the
        frame root it followed)."""
        with self._connection() as conn:
            rows = conn.execute(self.sql.journal, (session_id, after)).fetchall()
        return journal_entries(rows, after)

    def finish(
        self,
        session_id: str,
        journal: list[JournalEntry],
        artifacts: Mapping[str, bytes],
        record_root: str,
    ) -> None:
        """Close a session in one transaction: the pentads of ``journal`` (its entries)
        become artifacts, with ``artifacts`` (record, head frame, blotter), and its
        status becomes closed (see :func:`..store_rows.closing_rows`). When the journal
        moved past ``journal`` meanwhile (another process), nothing is written and
        ``JournalConflict`` is raised."""
        pentads, owned = closing_rows(session_id, journal, artifacts)
        expected = journal[-1].seq if journal else 0
        sql = self.sql
        with self._transaction() as conn:
            if conn.execute(sql.lock_session, (session_id,)).fetchone() is None:
                raise KeyError(f"no session {session_id}")
            last = conn.execute(sql.last_seq, (session_id,)).fetchone()
            if last is None or int(last[0]) != expected:
                raise JournalConflict(f"session {session_id} moved past seq {expected}")
            self._many(conn, sql.put, [*pentads, *sorted(artifacts.items())])
            self._many(conn, sql.own, [(root, session_id) for root in owned])
            conn.execute(sql.close, (record_root, session_id))
            conn.execute(sql.stamp_closed, (session_id,))

    def set_grade(self, session_id: str, grade_root: str, body: bytes) -> None:
        """Store a grade and remember it as the session's grade."""
        with self._transaction() as conn:
            conn.execute(self.sql.put, (grade_root, body))
            conn.execute(self.sql.own, (grade_root, session_id))
            conn.execute(self.sql.set_grade, (grade_root, session_id))

    # -- lookahead ----------------------------------------------------------------------

    def note_unsealed(self, session_id: str) -> None:
        """Remember (once) that the session was served while its scenario was not sealed."""
        with self._transaction() as conn:
            self._lock_lookahead(conn, session_id)
            conn.execute(self.sql.note_unsealed, (session_id, session_id))

    def _lock_lookahead(self, conn: Connection, session_id: str) -> None:
        """Serialise notes of one session (nothing to do where a write takes the file)."""

    def add_read(self, session_id: str, seq: int, bar: int, what: str) -> None:
        """Remember a read that held bars after the session's clock (``bar``) at ``seq``,
        unless one at an earlier seq is remembered: a session keeps its first, whichever
        process noted it."""
        with self._transaction() as conn:
            self._lock_lookahead(conn, session_id)
            conn.execute(self.sql.later_reads, (session_id, seq))
            conn.execute(self.sql.add_read, (session_id, seq, bar, what, session_id))

    def lookahead(self, session_id: str) -> tuple[bool, list[tuple[int, int, str]]]:
        """Whether the session was ever served unsealed, and its reads (seq, bar, what)
        in the order they happened."""
        with self._connection() as conn:
            rows = conn.execute(self.sql.lookahead, (session_id,)).fetchall()
        return lookahead_reads(rows)

    # -- horizons: per (principal, scenario), the furthest bar shown (one row, O(1)) ------

    def horizon(self, principal: str, scenario_id: str) -> Horizon | None:
        with self._connection() as conn:
            row = conn.execute(self.sql.horizon, (principal, scenario_id)).fetchone()
        return None if row is None else Horizon(*row)  # as append reads it

    def raise_horizon(self, principal: str, scenario_id: str, bar: int, what: str) -> None:
        """Raise the horizon to ``bar`` (shown by ``what``); a lower bar changes nothing."""
        with self._connection() as conn:
            conn.execute(self.sql.raise_horizon, (principal, scenario_id, bar, what))

    def count_session(
        self, principal: str, scenario_id: str, session_id: str, *, short: bool = False
    ) -> int | None:
        """Count session ``session_id`` of the principal on the scenario unless it was
        counted: its flag set and the row's count raised in one transaction, so that of
        replicas counting it at once one counts it (PostgreSQL: the flag's update locks
        the session's row, and the others, waiting, then find it set); how many now
        (``None``: counted already). See ``RuntimeStore`` for ``short``."""
        sql = self.sql
        with self._transaction() as conn:
            if conn.execute(sql.mark_counted, (scenario_id, session_id, short)).rowcount != 1:
                return None
            rows = conn.execute(sql.count_session, (principal, scenario_id)).fetchall()
        return int(rows[0][0])

    # -- operations ---------------------------------------------------------------------

    def put_operation(self, token: str, principal: str, session_id: str) -> None:
        """Remember whose and which session's grade ``token`` resumes (idempotent)."""
        with self._connection() as conn:
            conn.execute(self.sql.put_operation, (token, principal, session_id))

    def operation(self, token: str) -> tuple[str, str] | None:
        """The (principal, session id) of an operation token, or ``None``."""
        with self._connection() as conn:
            row = conn.execute(self.sql.operation, (token,)).fetchone()
        return None if row is None else (str(row[0]), str(row[1]))
