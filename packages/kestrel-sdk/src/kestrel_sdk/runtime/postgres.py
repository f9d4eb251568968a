"""PostgreSQL persistence: the ``RuntimeStore`` port shared by any number of processes.

Needs the ``postgres`` extra (psycopg 3 and psycopg_pool); nothing else imports psycopg.
The port's logic is :class:`.sql.SqlStore`'s, shared with SQLite; this adapter gives it
a pool of autocommit connections. The schema is created on first use, under an advisory
lock so that replicas starting together do not race. Tables are prefixed ``kestrel_`` so
a database may be shared with other applications (one of its own is simpler).

The journal is keyed ``(session, seq)``: two processes racing on one session cannot both
append a seq, so a session is never forked; the loser gets :class:`JournalConflict`,
catches up from the journal and applies after the winner. An append also takes a
``FOR SHARE`` lock on its session row, which the close (``FOR UPDATE``) waits for and then
re-reads, so no submission lands after the record that closes its session.

Durability: an accepted submission is one committed statement (autocommit), so it is on
the server before the response is returned; what survives the *server's* crash is the
server's setting (``synchronous_commit``; on by default: flushed to its WAL). psycopg
prepares a statement on the server once it has run a few times.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, ClassVar, Final

import psycopg
import psycopg_pool
from kestrel_protocol import KestrelError, RefusalCode
from kestrel_protocol.outage import (
    POOL_WAIT_S,
    RECONNECT_WINDOW_S,
    driver_reason,
    store_unavailable,
)
from kestrel_protocol.store import StoreLocation

from .sql import POSTGRES, PREFIXES, TABLES, Connection, SqlStore, Statements

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
    """CREATE TABLE IF NOT EXISTS kestrel_session_times (  -- in no object or root
        session TEXT PRIMARY KEY,
        closed_at TEXT,  -- UTC, by the server's clock when the session closed
        pruned_at TEXT  -- when its steps were pruned (kestrel prune)
    )""",
]

_STATEMENTS: Final = Statements.of(POSTGRES)
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


class PostgresStore(SqlStore):
    """The ``RuntimeStore`` port over a PostgreSQL database (``postgresql://…``)."""

    shared = True
    sql: ClassVar[Statements] = _STATEMENTS
    duplicate: ClassVar[tuple[type[Exception], ...]] = (psycopg.errors.UniqueViolation,)

    def __init__(self, dsn: str, *, pool_size: int = 16) -> None:
        self._location = str(StoreLocation("postgresql", dsn=dsn))
        self._dsn = dsn
        self._pool = open_pool(dsn, pool_size, "kestrel-runtime")
        with self._connection() as conn:
            assert isinstance(conn, psycopg.Connection)
            create_schema(conn, _SCHEMA, "runtime", SCHEMA_VERSION)

    @property
    def location(self) -> str:
        return self._location

    def close(self) -> None:
        """Close the pool (idempotent)."""
        self._pool.close()

    @contextmanager
    def _connection(self) -> Iterator[Connection]:
        try:
            with self._pool.connection() as conn:
                yield conn
        except psycopg.OperationalError as exc:  # server gone, pool exhausted ...
            raise store_unavailable(self._dsn, exc) from None

    @contextmanager
    def _transaction(self) -> Iterator[Connection]:
        with self._connection() as conn:
            assert isinstance(conn, psycopg.Connection)
            with conn.transaction():
                yield conn

    def _many(self, conn: Connection, statement: str, rows: list[tuple[Any, ...]]) -> None:
        assert isinstance(conn, psycopg.Connection)
        with conn.cursor() as cursor:
            cursor.executemany(statement, rows)

    def reclaim(self) -> None:
        """``VACUUM`` the runtime's tables: PostgreSQL keeps the freed pages for the
        tables' next rows (``VACUUM FULL``, which locks the tables, would return them
        to the operating system; that is the database administrator's call)."""
        with self._connection() as conn:
            conn.execute("VACUUM " + ", ".join(self._tables()))

    def footprint(self) -> int:
        """Bytes of the runtime's tables, their indexes and TOAST."""
        with self._connection() as conn:
            row = conn.execute(
                "SELECT coalesce(sum(pg_total_relation_size(to_regclass(t))), 0)"
                " FROM unnest(%s::text[]) AS t",
                (self._tables(),),
            ).fetchone()
        return int(row[0]) if row is not None else 0

    @staticmethod
    def _tables() -> list[str]:
        return [PREFIXES[POSTGRES.name] + name for name in TABLES]

    def _lock_lookahead(self, conn: Connection, session_id: str) -> None:
        # one 'unsealed' row per session even when replicas note it at once
        conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (session_id,))
