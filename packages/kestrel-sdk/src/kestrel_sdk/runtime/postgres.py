"""PostgreSQL persistence: the ``RuntimeStore`` port shared by any number of processes.

Needs the ``postgres`` extra (psycopg 3 and psycopg_pool); nothing else imports psycopg.
The schema is created (and later migrated) on first use, under an advisory lock so that
replicas starting together do not race. Tables are prefixed ``kestrel_`` so a database
may be shared with other applications (one of its own is simpler).

The journal is keyed ``(session, seq)``: two processes racing on one session cannot both
append a seq, so a session is never forked; the loser gets :class:`JournalConflict`,
catches up from the journal and applies after the winner. An append also takes a
``FOR SHARE`` lock on its session row, which the close (``FOR UPDATE``) waits for and then
re-reads, so no submission lands after the record that closes its session.

Durability: an accepted submission is one committed statement (autocommit), so it is on
the server before the response is returned; what survives the *server's* crash is the
server's setting (``synchronous_commit``; on by default: flushed to its WAL).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import psycopg
import psycopg_pool
from kestrel_protocol import KestrelError, RefusalCode, canonical_json
from kestrel_protocol.outage import (
    POOL_WAIT_S,
    RECONNECT_WINDOW_S,
    driver_reason,
    store_unavailable,
)
from kestrel_protocol.store import (
    ArtifactStatus,
    Horizon,
    JournalConflict,
    JournalEntry,
    SessionHead,
    SessionRow,
    StoreLocation,
)

from .artifacts import checked_root, verified_artifact
from .pentads import stored_pentad_bytes
from .store_rows import closing_rows, journal_entries, lookahead_reads

__all__ = ["SCHEMA_VERSION", "PostgresStore"]

log = logging.getLogger(__name__)

SCHEMA_VERSION = "3"

_SCHEMA = [
    "CREATE TABLE IF NOT EXISTS kestrel_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS kestrel_artifacts (root TEXT PRIMARY KEY, body BYTEA NOT NULL)",
    """CREATE TABLE IF NOT EXISTS kestrel_sessions (
        n BIGSERIAL UNIQUE,
        id TEXT PRIMARY KEY,
        principal TEXT NOT NULL,
        scenario_id TEXT NOT NULL,
        scenario_root TEXT NOT NULL,
        label TEXT NOT NULL,
        status TEXT NOT NULL,
        record_root TEXT,
        grade_root TEXT,
        UNIQUE (principal, scenario_root, label)
    )""",
    """CREATE TABLE IF NOT EXISTS kestrel_journal (
        session TEXT NOT NULL,
        seq INTEGER NOT NULL,  -- row 0 holds the opening frame's root
        source TEXT NOT NULL,
        pentad_root TEXT NOT NULL,
        frame_root TEXT NOT NULL,
        PRIMARY KEY (session, seq)
    )""",
    "CREATE INDEX IF NOT EXISTS kestrel_sessions_by_grade ON kestrel_sessions (grade_root)",
    """CREATE TABLE IF NOT EXISTS kestrel_owners (  -- whose artifact a root is
        root TEXT NOT NULL,
        session TEXT NOT NULL,
        PRIMARY KEY (root, session)
    )""",
    "CREATE INDEX IF NOT EXISTS kestrel_journal_pentad ON kestrel_journal"
    " USING hash (pentad_root) WHERE seq > 0",
    """CREATE TABLE IF NOT EXISTS kestrel_lookahead (
        n BIGSERIAL PRIMARY KEY,  -- the order things were seen in
        session TEXT NOT NULL,
        seq INTEGER NOT NULL,  -- the session's seq then
        bar INTEGER NOT NULL,  -- its clock bar then
        what TEXT NOT NULL  -- 'unsealed' or the read
    )""",
    "CREATE INDEX IF NOT EXISTS kestrel_lookahead_session ON kestrel_lookahead (session, n)",
    """CREATE TABLE IF NOT EXISTS kestrel_horizons (  -- per (principal, scenario)
        principal TEXT NOT NULL,
        scenario TEXT NOT NULL,
        bar INTEGER NOT NULL,  -- the furthest bar shown (-1: none yet)
        what TEXT NOT NULL,  -- what showed it
        sessions INTEGER NOT NULL,  -- sessions the principal opened on the scenario
        PRIMARY KEY (principal, scenario)
    )""",
    """CREATE TABLE IF NOT EXISTS kestrel_operations (
        token TEXT PRIMARY KEY,
        principal TEXT NOT NULL,
        session TEXT NOT NULL
    )""",
]

_SESSION_COLUMNS = (
    "id, principal, scenario_id, scenario_root, label, status, record_root, grade_root"
)
_APPEND = (
    "INSERT INTO kestrel_journal (session, seq, source, pentad_root, frame_root)"
    " SELECT id, %s, %s, %s, %s FROM kestrel_sessions"
    " WHERE id = %s AND status <> 'closed' FOR SHARE"
)
_APPEND_ROW = (
    "INSERT INTO kestrel_journal (session, seq, source, pentad_root, frame_root)"
    " VALUES (%s, %s, %s, %s, %s)"
)
_PUT = (
    "INSERT INTO kestrel_artifacts (root, body) VALUES (%s, %s)"
    " ON CONFLICT (root) DO UPDATE SET body = EXCLUDED.body"
)
_OWN = "INSERT INTO kestrel_owners (root, session) VALUES (%s, %s) ON CONFLICT DO NOTHING"
_OWNED = (
    " AND EXISTS (SELECT 1 FROM kestrel_owners o JOIN kestrel_sessions s ON s.id = o.session"
    " WHERE o.root = %s AND s.principal = %s)"
)
_SCHEMA_LOCK = 0x6B657374  # pg_advisory_xact_lock key while creating or migrating


def create_schema(
    conn: psycopg.Connection[Any], statements: list[str], key: str, version: str
) -> None:
    """Create (or check) a schema once, whichever process gets there first."""
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (_SCHEMA_LOCK,))
        for statement in statements:
            conn.execute(statement)
        conn.execute(
            "INSERT INTO kestrel_meta (key, value) VALUES (%s, %s) ON CONFLICT (key) DO NOTHING",
            (key, version),
        )
        found = conn.execute("SELECT value FROM kestrel_meta WHERE key = %s", (key,)).fetchone()
    if found is None or found[0] != version:
        raise KestrelError(
            RefusalCode.BACKEND_UNAVAILABLE,
            f"the database has {key} schema {found[0] if found else '?'}; this Kestrel needs "
            f"schema {version}",
        )


def open_pool(dsn: str, size: int, name: str) -> psycopg_pool.ConnectionPool[Any]:
    """A pool of autocommit connections; ``BACKEND_UNAVAILABLE`` when the server is not there."""
    pool: psycopg_pool.ConnectionPool[Any] = psycopg_pool.ConnectionPool(
        dsn,
        min_size=1,
        max_size=size,
        kwargs={"autocommit": True},
        open=False,
        name=name,
        timeout=POOL_WAIT_S,
        reconnect_timeout=RECONNECT_WINDOW_S,
        # a connection broken by a server restart is replaced, not handed out (and the
        # pool reconnects by itself when the server returns)
        check=psycopg_pool.ConnectionPool.check_connection,
    )
    try:
        psycopg.connect(dsn, connect_timeout=10).close()  # fail fast: the pool would retry
        pool.open(wait=True, timeout=30.0)
    except (psycopg.Error, psycopg_pool.PoolTimeout) as exc:
        pool.close()
        raise KestrelError(
            RefusalCode.BACKEND_UNAVAILABLE,
            f"the store {StoreLocation('postgresql', dsn=dsn)} is unavailable: "
            f"{driver_reason(exc, dsn)}",
        ) from None
    return pool


class PostgresStore:
    """The ``RuntimeStore`` port over a PostgreSQL database (``postgresql://…``)."""

    shared = True

    def __init__(self, dsn: str, *, pool_size: int = 16) -> None:
        self._dsn = dsn
        self._location = str(StoreLocation("postgresql", dsn=dsn))
        self._pool = open_pool(dsn, pool_size, "kestrel-runtime")
        with self._connection() as conn:
            create_schema(conn, _SCHEMA, "runtime", SCHEMA_VERSION)

    @property
    def location(self) -> str:
        return self._location

    @contextmanager
    def _connection(self) -> Iterator[psycopg.Connection[Any]]:
        try:
            with self._pool.connection() as conn:
                yield conn
        except psycopg.OperationalError as exc:  # server gone, pool exhausted ...
            raise store_unavailable(self._dsn, exc) from None

    def close(self) -> None:
        """Close the pool (idempotent)."""
        self._pool.close()

    # -- artifacts ----------------------------------------------------------------------

    def put(self, obj: Mapping[str, Any]) -> str:
        root = checked_root(obj)
        self.put_raw(root, canonical_json(obj))
        return root

    def put_raw(self, root: str, body: bytes) -> None:
        with self._connection() as conn:
            conn.execute(_PUT, (root, body))

    def lookup(
        self, root: str, principal: str | None = None
    ) -> tuple[dict[str, Any] | None, ArtifactStatus]:
        """As ``SqliteStore.lookup``: with ``principal``, only an artifact of one of its
        sessions is found (another's is ``missing``, by the same queries)."""
        owned = principal is not None
        with self._connection() as conn:
            row = conn.execute(
                "SELECT body FROM kestrel_artifacts WHERE root = %s" + (_OWNED if owned else ""),
                (root, root, principal) if owned else (root,),
            ).fetchone()
            if row is None:  # a pentad of a session not yet closed
                found = conn.execute(
                    "SELECT j.session, j.seq, j.source, p.frame_root FROM kestrel_journal j"
                    " LEFT JOIN kestrel_journal p ON p.session = j.session AND p.seq = j.seq - 1"
                    " JOIN kestrel_sessions s ON s.id = j.session"
                    " WHERE j.pentad_root = %s AND j.seq > 0"
                    + (" AND s.principal = %s" if owned else "")
                    + " LIMIT 1",
                    (root, principal) if owned else (root,),
                ).fetchone()
                if found is None:
                    return None, "missing"
                body = b""
                if found[3] is not None:
                    body = stored_pentad_bytes(found[0], found[1], found[3], found[2])
                return verified_artifact(root, body, self._location)
        return verified_artifact(root, bytes(row[0]), self._location)

    def get(self, root: str) -> dict[str, Any] | None:
        return self.lookup(root)[0]

    def has(self, root: str) -> bool:
        return self.lookup(root)[1] == "ok"

    # -- sessions -----------------------------------------------------------------------

    def session(self, session_id: str) -> SessionRow | None:
        with self._connection() as conn:
            row = conn.execute(
                f"SELECT {_SESSION_COLUMNS} FROM kestrel_sessions WHERE id = %s",
                (session_id,),
            ).fetchone()
        return SessionRow(*row) if row is not None else None

    def graded_session(self, grade_root: str, principal: str | None = None) -> SessionRow | None:
        """The session whose grade is ``grade_root`` (only among ``principal``'s)."""
        with self._connection() as conn:
            if principal is None:
                row = conn.execute(
                    f"SELECT {_SESSION_COLUMNS} FROM kestrel_sessions WHERE grade_root = %s",
                    (grade_root,),
                ).fetchone()
            else:
                row = conn.execute(
                    f"SELECT {_SESSION_COLUMNS} FROM kestrel_sessions"
                    " WHERE grade_root = %s AND principal = %s",
                    (grade_root, principal),
                ).fetchone()
        return SessionRow(*row) if row is not None else None

    def sessions(self, status: str | None = None) -> list[SessionRow]:
        with self._connection() as conn:
            if status is None:
                rows = conn.execute(
                    f"SELECT {_SESSION_COLUMNS} FROM kestrel_sessions ORDER BY n"
                ).fetchall()
            else:
                rows = conn.execute(
                    f"SELECT {_SESSION_COLUMNS} FROM kestrel_sessions WHERE status = %s ORDER BY n",
                    (status,),
                ).fetchall()
        return [SessionRow(*row) for row in rows]

    def labels(self, principal: str, scenario_root: str) -> set[str]:
        with self._connection() as conn:
            rows = conn.execute(
                "SELECT label FROM kestrel_sessions WHERE principal = %s AND scenario_root = %s",
                (principal, scenario_root),
            ).fetchall()
        return {str(row[0]) for row in rows}

    def insert_session(self, row: SessionRow) -> bool:
        with self._connection() as conn:
            cursor = conn.execute(
                f"INSERT INTO kestrel_sessions ({_SESSION_COLUMNS})"
                " VALUES (%s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT DO NOTHING",
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

    def head(self, session_id: str) -> SessionHead | None:
        with self._connection() as conn:
            row = conn.execute(
                "SELECT s.status, (SELECT max(seq) FROM kestrel_journal WHERE session = s.id)"
                " FROM kestrel_sessions s WHERE s.id = %s",
                (session_id,),
            ).fetchone()
        return None if row is None else SessionHead(int(row[1] or 0), str(row[0]))

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
        """Persist one accepted submission, committed before this returns; a taken seq,
        or a session closed meanwhile, raises ``JournalConflict`` and writes nothing."""
        try:
            with self._connection() as conn:
                if seq == 1 or status is not None:
                    row = (session_id, seq, source, pentad_root, frame_root)
                    self._append_rare(conn, row, prev if seq == 1 else None, status)
                    return
                cursor = conn.execute(_APPEND, (seq, source, pentad_root, frame_root, session_id))
                if cursor.rowcount != 1:
                    raise JournalConflict(f"session {session_id} is closed or gone")
        except psycopg.errors.UniqueViolation:
            raise JournalConflict(f"session {session_id} already has seq {seq}") from None

    @staticmethod
    def _append_rare(
        conn: psycopg.Connection[Any],
        row: tuple[str, int, str, str, str],
        prev: str | None,
        status: str | None,
    ) -> None:
        session_id = row[0]
        with conn.transaction():
            updated = conn.execute(
                "UPDATE kestrel_sessions SET status = coalesce(%s, status)"
                " WHERE id = %s AND status <> 'closed'",
                (status, session_id),
            )
            if updated.rowcount != 1:
                raise JournalConflict(f"session {session_id} is closed or gone")
            if prev is not None:
                conn.execute(_APPEND_ROW, (session_id, 0, "", "", prev))
            conn.execute(_APPEND_ROW, row)

    def journal(self, session_id: str, after: int = 0) -> list[JournalEntry]:
        with self._connection() as conn:
            rows = conn.execute(
                "SELECT seq, source, pentad_root, frame_root FROM kestrel_journal"
                " WHERE session = %s AND seq >= %s ORDER BY seq",
                (session_id, after),
            ).fetchall()
        return journal_entries(rows, after)

    def finish(
        self,
        session_id: str,
        journal: list[JournalEntry],
        artifacts: Mapping[str, bytes],
        record_root: str,
    ) -> None:
        """Close a session in one transaction (see ``SqliteStore.finish``); when the
        journal moved past ``journal`` meanwhile, ``JournalConflict`` and nothing written."""
        pentads, owned = closing_rows(session_id, journal, artifacts)
        expected = journal[-1].seq if journal else 0
        with self._connection() as conn, conn.transaction():
            locked = conn.execute(
                "SELECT status FROM kestrel_sessions WHERE id = %s FOR UPDATE", (session_id,)
            ).fetchone()
            if locked is None:
                raise KeyError(f"no session {session_id}")
            last = conn.execute(
                "SELECT coalesce(max(seq), 0) FROM kestrel_journal WHERE session = %s",
                (session_id,),
            ).fetchone()
            if last is None or int(last[0]) != expected:
                raise JournalConflict(f"session {session_id} moved past seq {expected}")
            with conn.cursor() as cursor:
                cursor.executemany(_PUT, [*pentads, *sorted(artifacts.items())])
                cursor.executemany(_OWN, [(root, session_id) for root in owned])
            conn.execute(
                "UPDATE kestrel_sessions SET status = 'closed', record_root = %s WHERE id = %s",
                (record_root, session_id),
            )

    def set_grade(self, session_id: str, grade_root: str, body: bytes) -> None:
        with self._connection() as conn, conn.transaction():
            conn.execute(_PUT, (grade_root, body))
            conn.execute(_OWN, (grade_root, session_id))
            conn.execute(
                "UPDATE kestrel_sessions SET grade_root = %s WHERE id = %s",
                (grade_root, session_id),
            )

    # -- lookahead ------------------------------------------------------------------------

    def note_unsealed(self, session_id: str) -> None:
        """Remember (once) that the session was served while its scenario was not sealed."""
        with self._connection() as conn, conn.transaction():
            # one row per session even when replicas note it at once
            conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (session_id,))
            conn.execute(
                "INSERT INTO kestrel_lookahead (session, seq, bar, what)"
                " SELECT %s, 0, 0, 'unsealed' WHERE NOT EXISTS (SELECT 1 FROM kestrel_lookahead"
                " WHERE session = %s AND what = 'unsealed')",
                (session_id, session_id),
            )

    def add_read(self, session_id: str, seq: int, bar: int, what: str) -> None:
        with self._connection() as conn:
            conn.execute(
                "INSERT INTO kestrel_lookahead (session, seq, bar, what) VALUES (%s, %s, %s, %s)",
                (session_id, seq, bar, what),
            )

    def lookahead(self, session_id: str) -> tuple[bool, list[tuple[int, int, str]]]:
        with self._connection() as conn:
            rows = conn.execute(
                "SELECT seq, bar, what FROM kestrel_lookahead WHERE session = %s ORDER BY n",
                (session_id,),
            ).fetchall()
        return lookahead_reads(rows)

    # -- horizons -------------------------------------------------------------------------

    def horizon(self, principal: str, scenario_id: str) -> Horizon | None:
        with self._connection() as conn:
            row = conn.execute(
                "SELECT bar, what, sessions FROM kestrel_horizons"
                " WHERE principal = %s AND scenario = %s",
                (principal, scenario_id),
            ).fetchone()
        return None if row is None else Horizon(int(row[0]), str(row[1]), int(row[2]))

    def raise_horizon(self, principal: str, scenario_id: str, bar: int, what: str) -> None:
        with self._connection() as conn:
            conn.execute(
                "INSERT INTO kestrel_horizons (principal, scenario, bar, what, sessions)"
                " VALUES (%s, %s, %s, %s, 0) ON CONFLICT (principal, scenario) DO UPDATE"
                " SET bar = EXCLUDED.bar, what = EXCLUDED.what"
                " WHERE EXCLUDED.bar > kestrel_horizons.bar",
                (principal, scenario_id, bar, what),
            )

    def count_session(self, principal: str, scenario_id: str) -> int:
        with self._connection() as conn:
            row = conn.execute(
                "INSERT INTO kestrel_horizons (principal, scenario, bar, what, sessions)"
                " VALUES (%s, %s, -1, '', 1) ON CONFLICT (principal, scenario) DO UPDATE"
                " SET sessions = kestrel_horizons.sessions + 1 RETURNING sessions",
                (principal, scenario_id),
            ).fetchone()
        assert row is not None
        return int(row[0])

    # -- operations -----------------------------------------------------------------------

    def put_operation(self, token: str, principal: str, session_id: str) -> None:
        with self._connection() as conn:
            conn.execute(
                "INSERT INTO kestrel_operations (token, principal, session) VALUES (%s, %s, %s)"
                " ON CONFLICT (token) DO NOTHING",
                (token, principal, session_id),
            )

    def operation(self, token: str) -> tuple[str, str] | None:
        with self._connection() as conn:
            row = conn.execute(
                "SELECT principal, session FROM kestrel_operations WHERE token = %s", (token,)
            ).fetchone()
        return None if row is None else (str(row[0]), str(row[1]))
