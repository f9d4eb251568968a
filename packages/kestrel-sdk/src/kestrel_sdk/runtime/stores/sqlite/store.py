"""The SQLite ``RuntimeStore`` adapter: one file in the Kestrel home, the default store.

The port's logic is :class:`..sql.SqlStore`'s, shared with PostgreSQL; this adapter
gives it one connection to ``$KESTREL_HOME/kestrel.db`` (:mod:`.database`), guarded by a
lock so that the event loop and worker threads may share the store; other processes on
the same file wait on ``busy_timeout``. A read while another thread holds that
connection (a write waiting up to the busy timeout for another process's write lock:
the ``kestrel`` CLI, a second door replica) takes a second connection, opened on first
need, and reads the last commit at once (WAL readers never wait for a writer): a frame
read on a door's event loop never waits behind a submit on a worker thread.

Durability decision: an accepted submission is committed before the response is
returned, one SQLite transaction (one statement) per step, in WAL mode (with what
the step marks by its horizon row, when it marks anything: see ``append``). With
``synchronous=NORMAL`` (the default) the commit is in the WAL file when it returns, which
a process kill (SIGKILL, a crash) does not lose; only an operating-system crash or power
loss may lose the last few steps, never corrupt the file.
``KESTREL_SQLITE_SYNCHRONOUS=FULL`` flushes every commit to the disk (power-loss
durability, at the cost of a flush per step). Statements are prepared once per
connection (the ``sqlite3`` module's statement cache).
"""

from __future__ import annotations

import os
import sqlite3
import threading
from contextlib import AbstractContextManager, nullcontext, suppress
from pathlib import Path
from typing import Any, ClassVar, Final

from kestrel_protocol import KestrelError, RefusalCode, kestrel_home
from kestrel_protocol.sqlite_files import connect_private, transaction
from kestrel_protocol.store import Horizon, StepMarks

from ..sql import SQLITE, Connection, SqlStore, Statements
from .database import CHECKPOINT_EVERY, SCHEMA_VERSION, checkpointer, open_database

__all__ = ["SqliteStore"]

_STATEMENTS: Final = Statements.of(SQLITE)
_SEEN_ROWS: Final = 4096
"""Horizon rows remembered as the store last read or raised them (principal and scenario
pairs; all forgotten at once beyond that, and read again by their next step)."""


class _Held:
    """The store's connection with its lock held, for one statement or a few (each
    committing on its own); released on exit (:meth:`SqliteStore._release`)."""

    __slots__ = ("_store",)

    def __init__(self, store: SqliteStore) -> None:
        self._store = store

    def __enter__(self) -> Connection:
        store = self._store
        store._lock.acquire()
        return store._conn

    def __exit__(self, *exc: object) -> None:
        self._store._release()


class _Taken(_Held):
    """The store's connection, its lock already taken by :meth:`SqliteStore._reading`."""

    __slots__ = ()

    def __enter__(self) -> Connection:
        return self._store._conn


class _Reader:
    """The second connection (:meth:`SqliteStore._reading`), opened on first use, under
    its own lock (reads are short: none waits for a writer)."""

    __slots__ = ("_conn", "_lock", "_path")

    def __init__(self, path: Path) -> None:
        self._path = path
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None

    def __enter__(self) -> Connection:
        self._lock.acquire()
        if self._conn is None:
            try:
                self._conn = connect_private(self._path)
            except BaseException:
                self._lock.release()
                raise
        return self._conn

    def __exit__(self, *exc: object) -> None:
        self._lock.release()

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None


class SqliteStore(SqlStore):
    """The ``RuntimeStore`` port over one SQLite file (``<home>/kestrel.db``, or ``path``)."""

    shared = False  # other processes on the file are met by JournalConflict, not polled
    sql: ClassVar[Statements] = _STATEMENTS
    duplicate: ClassVar[tuple[type[Exception], ...]] = (sqlite3.IntegrityError,)

    def __init__(self, home: str | Path | None = None, *, path: str | Path | None = None) -> None:
        if path is not None:
            self.path = Path(os.path.abspath(Path(path).expanduser()))
            self.home = self.path.parent
        else:
            self.home = kestrel_home(home)
            self.path = self.home / "kestrel.db"
        self.home.mkdir(parents=True, exist_ok=True, mode=0o700)
        self._lock = threading.RLock()
        self._uses = 0  # holds of the connection since the last checkpoint was asked for
        # the horizon rows as last read or raised, each with its values in append_unmoved
        self._seen: dict[tuple[str, str], tuple[Horizon | None, tuple[Any, ...]]] = {}
        self._checkpointer = checkpointer(self.path, self._lock)
        self._held = _Held(self)  # the connection, lock held: every statement's way in
        self._taken = _Taken(self)
        self._reader = _Reader(self.path)
        # 0600, created before SQLite opens it; autocommit: a step's one statement is its
        # transaction; statements prepared once (the statement cache holds them all)
        self._conn = connect_private(self.path)
        # a step's own cursor (append): the connection's execute makes one per statement
        self._cursor = self._conn.cursor()
        schema = open_database(self._conn, self._lock)
        if schema != SCHEMA_VERSION:
            self.close()
            raise KestrelError(
                RefusalCode.BACKEND_UNAVAILABLE,
                f"{self.path} has store schema {schema}; this Kestrel needs schema "
                f"{SCHEMA_VERSION}. Nothing was changed. To keep its sessions, export their "
                "proofs with the Kestrel that made it (kestrel proof SESSION -o FILE; they "
                "verify with any version), then start afresh: "
                f"mv {self.path} {self.path}.schema-{schema} (or use another --home)",
                {"path": str(self.path)},
            )

    @property
    def location(self) -> str:
        return str(self.path)

    def close(self) -> None:
        """Close the connections (idempotent)."""
        self._checkpointer.stop()
        with self._lock, suppress(sqlite3.ProgrammingError):
            self._conn.close()
        with suppress(sqlite3.ProgrammingError):
            self._reader.close()

    def reclaim(self) -> None:
        """Rewrite the file without its free pages (``VACUUM``) and empty the WAL into
        it, so that what pruning freed goes back to the file system. Needs the file to
        itself for a moment: another process reading it is waited for (the busy
        timeout), then ``BACKEND_UNAVAILABLE``, nothing lost (run it again later)."""
        try:
            with self._lock:
                self._conn.execute("VACUUM")
                self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        except sqlite3.OperationalError as exc:
            raise KestrelError(
                RefusalCode.BACKEND_UNAVAILABLE,
                f"{self.path} could not be compacted ({exc}): another process is using it; "
                "nothing was lost, run kestrel prune again when it is idle",
                {"path": str(self.path)},
            ) from None

    def footprint(self) -> int:
        """Bytes of the file and its write-ahead log (``-shm``, an index of the log that
        exists only while the file is open, is not counted)."""
        total = 0
        for suffix in ("", "-wal"):
            with suppress(FileNotFoundError):
                total += Path(f"{self.path}{suffix}").stat().st_size
        return total

    def integrity_check(self) -> str:
        """``PRAGMA integrity_check`` (``"ok"`` when the file is sound)."""
        with self._lock:
            row = self._conn.execute("PRAGMA integrity_check").fetchone()
        return str(row[0])

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
        """:meth:`..sql.SqlStore.append`, its ``marks`` in the row's transaction (a
        process killed after the commit leaves no step unmarked), the horizon row read
        once: a step expects the row as this store last read or raised it and, when it
        is and marks nothing (the common step), makes one statement, no read (one writer
        at a time: the row its statement read is the row as its commit left it). A row
        moved otherwise (a session opened, another process), or a step refused for
        another reason, is the statements as before, in one transaction."""
        if horizon is not None and status is None and seq > 1:
            try:
                seen, row = self._seen[horizon]
            except KeyError:
                pass  # not read yet (or forgotten)
            else:
                step = (
                    session_id,
                    session_id,
                    seq - 1,
                    prev,
                    *row,
                    seq,
                    source,
                    pentad_root,
                    frame_root,
                    clock,
                )
                try:
                    if seen is None or marks is None or not marks.due(seen):
                        # the store's cursor: the statement runs to its end, so it never
                        # keeps a read transaction open between holds
                        self._lock.acquire()
                        try:
                            self._cursor.execute(self.sql.append_unmoved, step)
                        finally:
                            self._release()
                    else:
                        with self._transaction() as conn:
                            conn.execute(self.sql.append_unmoved, step)
                            marks.mark(seen)
                except sqlite3.IntegrityError:
                    pass  # the row moved, or the step is refused: the statements below say
                else:
                    return seen
        with nullcontext() if marks is None else self._transaction():
            found = super().append(
                session_id,
                seq,
                source,
                pentad_root,
                frame_root,
                prev=prev,
                status=status,
                clock=clock,
                horizon=horizon,
            )
            if horizon is not None:
                self._saw(horizon, found)  # before its marks raise it
            if marks is not None and found is not None:
                marks.mark(found)
        return found

    def raise_horizon(self, principal: str, scenario_id: str, bar: int, what: str) -> None:
        """:meth:`..sql.SqlStore.raise_horizon`, the next step expecting the row as raised
        (a session ahead of its principal's others raises it on each of its steps)."""
        super().raise_horizon(principal, scenario_id, bar, what)
        seen, _ = self._seen.get((principal, scenario_id), (None, ()))
        if seen is not None and bar > seen.bar:  # else as it was: the statement raises only
            self._saw((principal, scenario_id), Horizon(bar, what, seen.sessions))

    def _saw(self, key: tuple[str, str], horizon: Horizon | None) -> None:
        """Remember the horizon row ``key`` as read or raised, with its values in
        ``append_unmoved`` (all null: there is none)."""
        if len(self._seen) >= _SEEN_ROWS:
            self._seen.clear()
        if horizon is None:
            self._seen[key] = (None, (*key, None, None, None))
        else:
            self._seen[key] = (horizon, (*key, horizon.bar, horizon.what, horizon.sessions))

    def _release(self) -> None:
        """Release the connection (held by :class:`_Held` or a step), counting the hold
        towards a checkpoint: every :data:`CHECKPOINT_EVERY` holds, a checkpoint is asked
        of the background thread."""
        try:
            self._uses += 1
            if self._uses >= CHECKPOINT_EVERY:
                self._uses = 0
                self._checkpointer.request()
        finally:
            self._lock.release()

    def _connection(self) -> AbstractContextManager[Connection]:
        return self._held

    def _reading(self) -> AbstractContextManager[Connection]:
        """The connection, when free or this thread's (its open transaction's writes
        visible); else, while another thread holds it (a write that may wait up to the
        busy timeout), the second connection, which reads the last commit at once."""
        if self._lock.acquire(blocking=False):
            return self._taken
        return self._reader

    def _transaction(self) -> AbstractContextManager[Connection]:
        """One ``BEGIN IMMEDIATE`` transaction, or the one this thread has open (a
        step's, which its marks join)."""
        with self._lock:  # reentrant: held by this thread if its transaction is open
            if self._conn.in_transaction:
                return self._held
        return transaction(self._conn, self._lock)

    def _many(self, conn: Connection, statement: str, rows: list[tuple[Any, ...]]) -> None:
        assert isinstance(conn, sqlite3.Connection)
        conn.executemany(statement, rows)
