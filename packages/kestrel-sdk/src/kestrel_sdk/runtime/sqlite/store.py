"""SQLite persistence: content-addressed artifacts, sessions and the submission journal.

One file, ``$KESTREL_HOME/kestrel.db`` (:mod:`.database`), in WAL mode, and beside it
``kestrel.db.steps/``, the step files (:mod:`..steps`). Durability decision: an accepted
submission is written before the response is returned, and survives the process being
killed (SIGKILL, a crash). Every step after the first is one line appended with one
``write`` to the session's step file (in the operating system's page cache once
``write`` returns, which a process kill does not lose); a step that changes the
session's status (a stand-down) carries it in its line, and the sessions table is then
updated in a small transaction (a kill between the two leaves the line, whose status
the next fold stores). The first submission of a session (which also writes row 0) is
one transaction in the journal table, which ``synchronous=NORMAL`` in WAL mode makes
survive a kill the same way (the WAL is written before ``COMMIT`` returns). Only an
operating-system crash or power loss may lose the last few steps, never corrupt the
file. ``synchronous=FULL`` would fsync on every step and cost the per-step path an order
of magnitude; set
``KESTREL_SQLITE_SYNCHRONOUS=FULL`` to trade that speed for power-loss durability (step
lines are then ``fdatasync``-ed).

The journal table (:mod:`.journal`) holds each submission's source, the pentad's root and
the root of the frame it produced. Everything else in a pentad is derivable from the
journal (its session from the key, its ``prev`` from the previous row's frame root; row 0
of a session holds the root of its opening frame), so its canonical bytes are rebuilt,
and checked against the stored root, when they are read. A session's step lines are
folded into the table when it closes, when a store opens or closes, and when an artifact
lookup misses; a pentad becomes a row of the artifact table when its session closes;
until then ``get`` rebuilds it from the journal.

One connection per store, guarded by a lock, so a store may be shared by the event
loop and worker threads; other processes on the same home wait on ``busy_timeout``.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
from collections.abc import Mapping
from contextlib import suppress
from functools import partial
from pathlib import Path
from typing import Any

from kestrel_protocol import KestrelError, RefusalCode, canonical_json, kestrel_home
from kestrel_protocol.sqlite_files import connect_private
from kestrel_protocol.store import (
    ArtifactStatus,
    Horizon,
    JournalConflict,
    JournalEntry,
    SessionHead,
    SessionRow,
)

from ..artifacts import checked_root, verified_artifact
from ..pentads import quoted
from ..steps import StepFile, StepFiles, step_line
from ..store_rows import closing_rows, journal_entries
from .database import CHECKPOINT_EVERY, SCHEMA_VERSION, Checkpointer, open_database, transaction
from .horizons import Horizons
from .journal import (
    APPEND,
    SEQ_BITS,
    fold_lines,
    head_of,
    journal_pentad,
    rows,
    set_status,
    table_last,
)
from .sessions import OWN, Sessions

__all__ = ["SqliteStore"]

log = logging.getLogger(__name__)

_KEYS_MAX = 1024  # sessions whose journal key base is remembered (memory stays bounded)
_OWNED_BODY = (
    "SELECT body FROM artifacts WHERE root = ?1 AND EXISTS (SELECT 1 FROM owners"
    " JOIN sessions ON sessions.rowid = owners.session"
    " WHERE owners.root = ?1 AND sessions.principal = ?2)"
)


class SqliteStore:
    """The ``RuntimeStore`` port over one SQLite file (``<home>/kestrel.db``, or ``path``)."""

    shared = False  # other processes on the file are met by JournalConflict, not polled

    def __init__(self, home: str | Path | None = None, *, path: str | Path | None = None) -> None:
        if path is not None:
            self.path = Path(os.path.abspath(Path(path).expanduser()))
            self.home = self.path.parent
        else:
            self.home = kestrel_home(home)
            self.path = self.home / "kestrel.db"
        self.home.mkdir(parents=True, exist_ok=True, mode=0o700)
        self._lock = threading.RLock()
        self._keys: dict[str, int] = {}
        self._appends = 0
        self._checkpointer = Checkpointer(self.path)
        self._conn = connect_private(self.path)  # 0600, created before SQLite opens it
        self._transaction = partial(transaction, self._conn, self._lock)
        self._sessions = Sessions(self._conn, self._lock, self._transaction)
        self._horizons = Horizons(self._conn, self._lock, self._transaction)
        self._closed = True  # until opened: nothing to fold on a failed open
        opened = open_database(self._conn, self._lock)
        self._steps = StepFiles(
            self.path.with_name(self.path.name + ".steps"), opened.steps_token, opened.sync
        )
        if opened.schema != SCHEMA_VERSION:
            self.close()
            raise KestrelError(
                RefusalCode.BACKEND_UNAVAILABLE,
                f"{self.path} has store schema {opened.schema}; this Kestrel needs schema "
                f"{SCHEMA_VERSION} (move the file aside to start afresh)",
                {"path": str(self.path)},
            )
        self._closed = False
        self.fold_steps()  # what a process left unfolded (a crash, a kill)

    @property
    def location(self) -> str:
        return str(self.path)

    def close(self) -> None:
        """Fold the step files and close the connections (idempotent)."""
        with self._lock:
            if not self._closed:
                self._closed = True
                try:
                    self.fold_steps()
                except (sqlite3.Error, OSError) as exc:  # the next open folds them
                    log.warning("folding the step files of %s failed: %s", self.path, exc)
            self._steps.close()
        self._checkpointer.stop()
        with self._lock, suppress(sqlite3.ProgrammingError):
            self._conn.close()

    def integrity_check(self) -> str:
        """``PRAGMA integrity_check`` (``"ok"`` when the file is sound)."""
        with self._lock:
            row = self._conn.execute("PRAGMA integrity_check").fetchone()
        return str(row[0])

    # -- step files (see ..steps) -------------------------------------------------------

    def fold_steps(self) -> None:
        """Move every step file's lines of this database into the journal table."""
        with self._lock:
            for rowid in self._steps.rowids():
                try:
                    self._fold(rowid)
                except KestrelError as exc:  # corrupt: that session refuses to resume
                    log.error("step file of session rowid %d not folded: %s", rowid, exc)

    def _fold(self, rowid: int) -> None:
        with self._steps.locked(rowid, create=False) as step:
            if step is None:
                return
            with self._transaction() as conn:
                found = conn.execute(
                    "SELECT status FROM sessions WHERE rowid = ?", (rowid,)
                ).fetchone()
                if found is None:
                    log.warning("step file %s names no session; left as it is", step.path)
                    return
                self._fold_into(conn, rowid << SEQ_BITS, step)
            # folded: the lines are all in the table now (a closed session's file may be
            # left by a close that was killed before it removed the file)
            self._steps.drop(rowid, unlink=True)

    def _fold_into(self, conn: sqlite3.Connection, base: int, step: StepFile) -> None:
        """:func:`.journal.fold_lines`, counting the rows toward the next checkpoint."""
        self._appends += fold_lines(conn, base, step)
        if self._appends >= CHECKPOINT_EVERY:
            self._appends = 0
            self._checkpointer.request()

    # -- the journal (see .journal) ---------------------------------------------------

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
    ) -> None:
        """Persist one accepted submission, committed before this returns.

        ``prev`` (the frame root the submission was applied to) is stored only with
        seq 1, as row 0; later ones are the previous row's frame root. A duplicate seq
        (another process advanced the session) raises ``JournalConflict`` and writes
        nothing.
        """
        base = self._keys.get(session_id)
        if base is None:
            base = self._base(session_id)
        if seq == 1:
            row = (base | seq, source, pentad_root, frame_root)
            self._append_first(base, row, prev, status)
            return
        line = step_line(seq, pentad_root, frame_root, quoted(source), status)
        with self._lock:
            step = self._steps.cached(base >> SEQ_BITS)
            if step is None or not self._steps.fast_append(step, seq, line):
                self._append_slow(session_id, base, seq, line)
            if status is not None:  # the line carries it too: a fold stores it again
                with self._transaction() as conn:
                    set_status(conn, base, status)

    def _append_slow(self, session_id: str, base: int, seq: int, line: bytes) -> None:
        """Append after finding out what the step file holds now: another process (or
        store) appended, folded or closed the session, or this store has not seen it."""
        rowid = base >> SEQ_BITS
        found = self._conn.execute("SELECT status FROM sessions WHERE rowid = ?", (rowid,))
        if found.fetchone() in (None, ("closed",)):  # closed elsewhere: make no file
            raise JournalConflict(f"session {session_id} is closed")
        with self._steps.locked(rowid, create=True) as step:
            assert step is not None
            found = self._conn.execute(
                "SELECT status FROM sessions WHERE rowid = ?", (rowid,)
            ).fetchone()
            last = table_last(self._conn, base)
            lines, end, written, _ = step.lines(last)
            head = lines[-1][0] if lines else last
            step.clear(end, written)  # a torn line: its copy never returned
            step.size = end
            step.seq = head
            if found is None or found[0] == "closed" or head != seq - 1:
                raise JournalConflict(f"session {session_id} is at seq {head}, not {seq - 1}")
            step.write(line, self._steps.sync)
            step.seq = seq
            step.map()

    def _append_first(
        self, base: int, row: tuple[int, str, str, str], prev: str, status: str | None
    ) -> None:
        """Seq 1, with row 0 (and the status, when seq 1 stood the session down): one
        transaction in the table, after folding the session's step file (so the table's
        rows stay in order; a file of another store's seq 1 makes this a conflict).

        The step file's lock is held through the transaction, made for the purpose when
        there is no file: another store's append of the same seq as a line takes that
        lock before it reads the table, so it reads this row and is refused."""
        rowid = base >> SEQ_BITS
        with self._lock, self._steps.locked(rowid, create=True) as step:
            assert step is not None
            try:
                with self._transaction() as conn:
                    self._fold_into(conn, base, step)
                    conn.execute(APPEND, (base, "", "", prev))
                    conn.execute(APPEND, row)
                    if status is not None:
                        set_status(conn, base, status)
            except sqlite3.IntegrityError:
                raise JournalConflict(f"journal key {row[0]} is taken") from None
            self._steps.drop(rowid, unlink=True)  # folded: its lines precede this row

    def _base(self, session_id: str) -> int:
        """The journal key of seq 0 of a session (its rowid shifted)."""
        base = self._keys.get(session_id)
        if base is not None:
            return base
        with self._lock:
            row = self._conn.execute(
                "SELECT rowid FROM sessions WHERE id = ?", (session_id,)
            ).fetchone()
        if row is None:
            raise KeyError(f"no session {session_id}")
        base = int(row[0]) << SEQ_BITS
        if len(self._keys) >= _KEYS_MAX:
            self._keys.clear()
        self._keys[session_id] = base
        return base

    def head(self, session_id: str) -> SessionHead | None:
        """The session's last seq and status; ``None`` when there is no such session."""
        with self._lock:
            row = self._conn.execute(
                "SELECT rowid, status FROM sessions WHERE id = ?", (session_id,)
            ).fetchone()
            if row is None:
                return None
            seq, changed = head_of(self._conn, self._steps, int(row[0]) << SEQ_BITS)
        status = str(row[1])
        if changed is not None and status == "open":  # a stand-down's line, not yet stored
            status = changed
        return SessionHead(seq, status)

    def journal(self, session_id: str, after: int = 0) -> list[JournalEntry]:
        """A session's accepted submissions after seq ``after``, in order (each with the
        frame root it followed)."""
        base = self._base(session_id)
        with self._lock:
            found, _ = rows(self._conn, self._steps, base, after)
        return journal_entries(found, after)

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
        low = self._base(session_id)
        owner = low >> SEQ_BITS
        # the step file's lock through the transaction (a file made for the purpose when
        # there is none): another store's next step reads the session closed, or waits
        with self._lock, self._steps.locked(owner, create=True) as step:
            assert step is not None
            with self._transaction() as conn:
                self._fold_into(conn, low, step)
                if table_last(conn, low) != (journal[-1].seq if journal else 0):
                    raise JournalConflict(f"session {session_id} moved past {journal[-1:]}")
                conn.executemany(
                    "INSERT OR REPLACE INTO artifacts (root, body) VALUES (?, ?)", pentads
                )
                for root, body in artifacts.items():
                    conn.execute(
                        "INSERT OR REPLACE INTO artifacts (root, body) VALUES (?, ?)", (root, body)
                    )
                conn.executemany(OWN, [(root, owner) for root in owned])
                conn.execute(
                    "UPDATE sessions SET status = 'closed', record_root = ? WHERE id = ?",
                    (record_root, session_id),
                )
            self._steps.drop(owner, unlink=True)  # folded: every step is in the table now

    # -- artifacts (ArtifactStore) ---------------------------------------------------

    def put(self, obj: Mapping[str, Any]) -> str:
        """Store ``obj``'s canonical bytes under its root; idempotent.

        An object carrying a ``root`` member that is not the root of its content is
        refused: the store never holds a lie.
        """
        root = checked_root(obj)
        self.put_raw(root, canonical_json(obj))
        return root

    def put_raw(self, root: str, body: bytes) -> None:
        """Store bytes the caller already canonicalised and hashed (the hot path)."""
        with self._transaction() as conn:
            conn.execute(
                "INSERT OR REPLACE INTO artifacts (root, body) VALUES (?, ?)", (root, body)
            )

    def lookup(
        self, root: str, principal: str | None = None
    ) -> tuple[dict[str, Any] | None, ArtifactStatus]:
        """The stored object and whether it was found intact.

        With ``principal``, only an artifact of one of that principal's sessions is
        found: another's is ``missing``, by the same queries as a root never stored (so
        neither the answer nor the path says it exists). A row whose bytes do not hash
        to its root is logged as corrupt and not returned.
        """
        with self._lock:
            if principal is None:
                row = self._conn.execute(
                    "SELECT body FROM artifacts WHERE root = ?", (root,)
                ).fetchone()
            else:
                row = self._conn.execute(_OWNED_BODY, (root, principal)).fetchone()
            body = bytes(row[0]) if row is not None else None
            if body is None:  # a pentad of a session not yet closed
                body = journal_pentad(self._conn, root, principal)
            if body is None and self._steps.rowids():  # or still in a step file
                self.fold_steps()
                body = journal_pentad(self._conn, root, principal)
        if body is None:
            return None, "missing"
        return verified_artifact(root, body, self.path)

    def get(self, root: str) -> dict[str, Any] | None:
        """The object verbatim, or ``None`` when absent or corrupt."""
        return self.lookup(root)[0]

    def has(self, root: str) -> bool:
        """Whether an intact object is stored under ``root``."""
        return self.lookup(root)[1] == "ok"

    # -- sessions, grades, lookahead reads, operations (see .sessions) -----------------

    def session(self, session_id: str) -> SessionRow | None:
        return self._sessions.session(session_id)

    def graded_session(self, grade_root: str, principal: str | None = None) -> SessionRow | None:
        return self._sessions.graded_session(grade_root, principal)

    def sessions(self, status: str | None = None) -> list[SessionRow]:
        return self._sessions.sessions(status)

    def labels(self, principal: str, scenario_root: str) -> set[str]:
        return self._sessions.labels(principal, scenario_root)

    def insert_session(self, row: SessionRow) -> bool:
        return self._sessions.insert_session(row)

    def set_grade(self, session_id: str, grade_root: str, body: bytes) -> None:
        self._sessions.set_grade(session_id, self._base(session_id) >> SEQ_BITS, grade_root, body)

    def note_unsealed(self, session_id: str) -> None:
        self._sessions.note_unsealed(session_id)

    def add_read(self, session_id: str, seq: int, bar: int, what: str) -> None:
        self._sessions.add_read(session_id, seq, bar, what)

    def lookahead(self, session_id: str) -> tuple[bool, list[tuple[int, int, str]]]:
        return self._sessions.lookahead(session_id)

    def horizon(self, principal: str, scenario_id: str) -> Horizon | None:
        return self._horizons.horizon(principal, scenario_id)

    def raise_horizon(self, principal: str, scenario_id: str, bar: int, what: str) -> None:
        self._horizons.raise_horizon(principal, scenario_id, bar, what)

    def count_session(self, principal: str, scenario_id: str) -> int:
        return self._horizons.count_session(principal, scenario_id)

    def put_operation(self, token: str, principal: str, session_id: str) -> None:
        self._sessions.put_operation(token, principal, session_id)

    def operation(self, token: str) -> tuple[str, str] | None:
        return self._sessions.operation(token)
