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
from typing import ClassVar, Final

from kestrel_protocol.postgres import PostgresDatabase
from kestrel_protocol.sql import POSTGRES, Connection

from .board_records import POSTGRES_BOARD_SCHEMA, BoardStatements, SqlBoardRecords
from .records import ARRIVALS_TABLE, DOOR_TABLES, DoorStatements, SqlDoorRecords

__all__ = ["SCHEMA_VERSION", "PostgresDoorStore"]

SCHEMA_VERSION = "1"

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
    # the append-only trigger and its function, made once (CREATE TRIGGER has no IF NOT
    # EXISTS before PostgreSQL 14)
    """DO $$ BEGIN
        IF NOT EXISTS (SELECT 1 FROM pg_trigger WHERE tgrelid = 'kestrel_door_audit'::regclass
                       AND tgname = 'kestrel_door_audit_append_only') THEN
            CREATE OR REPLACE FUNCTION kestrel_door_audit_append_only() RETURNS trigger
                LANGUAGE plpgsql AS $f$ BEGIN RAISE EXCEPTION 'audit rows are append-only'; END $f$;
            CREATE TRIGGER kestrel_door_audit_append_only BEFORE UPDATE OR DELETE
                ON kestrel_door_audit FOR EACH ROW
                EXECUTE FUNCTION kestrel_door_audit_append_only();
        END IF;
    END $$""",
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
    """CREATE TABLE IF NOT EXISTS kestrel_door_signing_keys (  -- attested grades
        kid TEXT PRIMARY KEY,
        private BYTEA NOT NULL,  -- the raw 32-byte Ed25519 private key
        created_at TEXT NOT NULL
    )""",
    """CREATE TABLE IF NOT EXISTS kestrel_door_revoked_keys (  -- keys revoke
        kid TEXT PRIMARY KEY,
        revoked_at TEXT NOT NULL
    )""",
    """CREATE TABLE IF NOT EXISTS kestrel_door_secrets (  -- the pseudonym key
        name TEXT PRIMARY KEY,
        value BYTEA NOT NULL,
        created_at TEXT NOT NULL
    )""",
    POSTGRES.render(ARRIVALS_TABLE, DOOR_TABLES, "kestrel_door_"),
]
"""Every statement idempotent: run on each start (a database made before a table was
kept gains it)."""

_STATEMENTS: Final = DoorStatements.of(POSTGRES, "kestrel_door_")


class PostgresDoorStore(PostgresDatabase, SqlDoorRecords, SqlBoardRecords):
    """``DoorRecords`` (and the board's published proofs) over a PostgreSQL database
    (``postgresql://…``)."""

    sql: ClassVar[DoorStatements] = _STATEMENTS
    board_sql: ClassVar[BoardStatements] = BoardStatements.of(POSTGRES, "kestrel_door_")

    def __init__(self, dsn: str, *, pool_size: int = 4) -> None:
        super().__init__(dsn, pool_size=pool_size, name="kestrel-door")
        self._create_schema([*_SCHEMA, POSTGRES_BOARD_SCHEMA], "door", SCHEMA_VERSION)

    @contextmanager
    def _audit_transaction(self) -> Iterator[Connection]:
        """Committed without waiting for the server's disk flush (an audit row is written
        on the door's event loop for every call; like the SQLite door file's
        ``synchronous=NORMAL``, only a crash of the database server or its machine may
        lose the last fraction of a second of rows)."""
        with self._transaction() as conn:
            conn.execute("SET LOCAL synchronous_commit TO off")
            yield conn
