"""The door's tables in PostgreSQL: the ``DoorRecords`` port shared by every replica.

Needs the ``postgres`` extra (psycopg 3 and psycopg_pool); nothing else in
the door imports psycopg. Tables are prefixed ``kestrel_door_`` and live in the same
database as the runtime's; they are created on first use under the advisory lock the
runtime's adapter also takes, so replicas starting together do not race. Audit rows are
append-only: a trigger refuses UPDATE and DELETE, as the SQLite adapter's does.
"""

from __future__ import annotations

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
from kestrel_protocol.sql import POSTGRES
from kestrel_protocol.store import StoreLocation

from .records import Connection, DoorStatements, SqlDoorRecords

__all__ = ["SCHEMA_VERSION", "PostgresDoorStore"]

SCHEMA_VERSION = "1"
_SCHEMA_LOCK = 0x6B657374  # the same key as the runtime adapter's

_SCHEMA = [
    "CREATE TABLE IF NOT EXISTS kestrel_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    """CREATE TABLE IF NOT EXISTS kestrel_door_tokens (
        id TEXT PRIMARY KEY,
        digest BYTEA NOT NULL UNIQUE,
        principal TEXT NOT NULL,
        scopes TEXT NOT NULL,
        label TEXT,
        created_at TEXT NOT NULL,
        revoked_at TEXT
    )""",
    """CREATE TABLE IF NOT EXISTS kestrel_door_audit (
        seq BIGSERIAL PRIMARY KEY,
        time TEXT NOT NULL,
        principal TEXT NOT NULL,
        venue TEXT NOT NULL,
        tool TEXT NOT NULL,
        digest TEXT NOT NULL,
        outcome TEXT NOT NULL
    )""",
    """CREATE OR REPLACE FUNCTION kestrel_door_audit_append_only() RETURNS trigger
        LANGUAGE plpgsql AS $$
        BEGIN RAISE EXCEPTION 'audit rows are append-only'; END $$""",
    "DROP TRIGGER IF EXISTS kestrel_door_audit_append_only ON kestrel_door_audit",
    """CREATE TRIGGER kestrel_door_audit_append_only BEFORE UPDATE OR DELETE
        ON kestrel_door_audit FOR EACH ROW EXECUTE FUNCTION kestrel_door_audit_append_only()""",
    """CREATE TABLE IF NOT EXISTS kestrel_door_opens (
        principal TEXT NOT NULL,
        day TEXT NOT NULL,
        count INTEGER NOT NULL,
        PRIMARY KEY (principal, day)
    )""",
    """CREATE TABLE IF NOT EXISTS kestrel_door_offers (
        offer_id TEXT PRIMARY KEY,
        principal TEXT NOT NULL,
        scenario TEXT NOT NULL,
        expires_at DOUBLE PRECISION NOT NULL
    )""",
    """CREATE TABLE IF NOT EXISTS kestrel_door_vouchers_used (
        voucher_id TEXT PRIMARY KEY,
        used_at TEXT NOT NULL,
        principal TEXT NOT NULL
    )""",
    """CREATE TABLE IF NOT EXISTS kestrel_door_approvals (
        principal TEXT NOT NULL,
        tool TEXT NOT NULL,
        granted_at TEXT NOT NULL,
        PRIMARY KEY (principal, tool)
    )""",
]

_KEYS = """CREATE TABLE IF NOT EXISTS kestrel_door_signing_keys (  -- attested grades
    kid TEXT PRIMARY KEY,
    private BYTEA NOT NULL,  -- the raw 32-byte Ed25519 private key
    created_at TEXT NOT NULL
)"""

_STATEMENTS: Final = DoorStatements.of(POSTGRES, "kestrel_door_")


class PostgresDoorStore(SqlDoorRecords):
    """``DoorRecords`` over a PostgreSQL database (``postgresql://…``)."""

    sql: ClassVar[DoorStatements] = _STATEMENTS

    def __init__(self, dsn: str, *, pool_size: int = 4) -> None:
        self._dsn = dsn
        self._location = str(StoreLocation("postgresql", dsn=dsn))
        self._pool: psycopg_pool.ConnectionPool[Any] = psycopg_pool.ConnectionPool(
            dsn,
            min_size=1,
            max_size=pool_size,
            kwargs={"autocommit": True},
            open=False,
            name="kestrel-door",
            timeout=POOL_WAIT_S,
            reconnect_timeout=RECONNECT_WINDOW_S,
            check=psycopg_pool.ConnectionPool.check_connection,  # see the runtime's pool
        )
        try:
            psycopg.connect(dsn, connect_timeout=10).close()  # fail fast: the pool would retry
            self._pool.open(wait=True, timeout=30.0)
        except (psycopg.Error, psycopg_pool.PoolTimeout) as exc:
            self._pool.close()
            raise KestrelError(
                RefusalCode.BACKEND_UNAVAILABLE,
                f"the store {self._location} is unavailable: {driver_reason(exc, dsn)}",
            ) from None
        with self._connection() as conn:
            assert isinstance(conn, psycopg.Connection)
            self._create_schema(conn)

    @staticmethod
    def _create_schema(conn: psycopg.Connection[Any]) -> None:
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (_SCHEMA_LOCK,))
            done = conn.execute("SELECT to_regclass('kestrel_door_approvals')").fetchone()
            if done is None or done[0] is None:
                for statement in _SCHEMA:
                    conn.execute(statement)
            conn.execute(_KEYS)  # also on a database made before keys were kept
            conn.execute(
                "INSERT INTO kestrel_meta (key, value) VALUES ('door', %s)"
                " ON CONFLICT (key) DO NOTHING",
                (SCHEMA_VERSION,),
            )
            found = conn.execute("SELECT value FROM kestrel_meta WHERE key = 'door'").fetchone()
        if found is None or found[0] != SCHEMA_VERSION:
            raise KestrelError(
                RefusalCode.BACKEND_UNAVAILABLE,
                f"the database has door schema {found[0] if found else '?'}; this Kestrel "
                f"needs schema {SCHEMA_VERSION}",
            )

    @contextmanager
    def _connection(self) -> Iterator[Connection]:
        try:
            with self._pool.connection() as conn:
                yield conn
        except psycopg.OperationalError as exc:
            raise store_unavailable(self._dsn, exc) from None

    @contextmanager
    def _transaction(self) -> Iterator[Connection]:
        with self._connection() as conn:
            assert isinstance(conn, psycopg.Connection)
            with conn.transaction():
                yield conn

    @contextmanager
    def _audit_transaction(self) -> Iterator[Connection]:
        """Committed without waiting for the server's disk flush (an audit row is written
        on the door's event loop for every call; like the SQLite door file's
        ``synchronous=NORMAL``, only a crash of the database server or its machine may
        lose the last fraction of a second of rows)."""
        with self._transaction() as conn:
            conn.execute("SET LOCAL synchronous_commit TO off")
            yield conn

    @property
    def location(self) -> str:
        return self._location

    def close(self) -> None:
        self._pool.close()
