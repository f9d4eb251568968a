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
from typing import Any

import psycopg
import psycopg_pool
from kestrel_protocol import KestrelError, RefusalCode
from kestrel_protocol.outage import (
    POOL_WAIT_S,
    RECONNECT_WINDOW_S,
    driver_reason,
    store_unavailable,
)
from kestrel_protocol.store import (
    OFFERS_KEPT,
    AuditEntry,
    PaymentOutcome,
    StoreLocation,
    TokenEntry,
)

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

_COUNT = (
    "INSERT INTO kestrel_door_opens (principal, day, count) VALUES (%s, %s, 1)"
    " ON CONFLICT (principal, day) DO UPDATE SET count = kestrel_door_opens.count + 1"
)


class PostgresDoorStore:
    """``DoorRecords`` over a PostgreSQL database (``postgresql://…``)."""

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
    def _connection(self) -> Iterator[psycopg.Connection[Any]]:
        try:
            with self._pool.connection() as conn:
                yield conn
        except psycopg.OperationalError as exc:
            raise store_unavailable(self._dsn, exc) from None

    @property
    def location(self) -> str:
        return self._location

    def close(self) -> None:
        self._pool.close()

    # -- issued tokens ------------------------------------------------------------------

    def add_token(self, row: TokenEntry, digest: bytes) -> None:
        with self._connection() as conn:
            conn.execute(
                "INSERT INTO kestrel_door_tokens (id, digest, principal, scopes, label,"
                " created_at) VALUES (%s, %s, %s, %s, %s, %s)",
                (row.id, digest, row.principal, row.scopes, row.label, row.created_at),
            )

    def tokens(self) -> list[TokenEntry]:
        with self._connection() as conn:
            rows = conn.execute(
                "SELECT id, principal, scopes, label, created_at, revoked_at"
                " FROM kestrel_door_tokens ORDER BY created_at, id"
            ).fetchall()
        return [TokenEntry(*row) for row in rows]

    def revoke_token(self, token_id: str, at: str) -> bool:
        with self._connection() as conn:
            cur = conn.execute(
                "UPDATE kestrel_door_tokens SET revoked_at = %s"
                " WHERE id = %s AND revoked_at IS NULL",
                (at, token_id),
            )
            return cur.rowcount > 0

    def token_grant(self, digest: bytes) -> tuple[bytes, str, str] | None:
        with self._connection() as conn:
            row = conn.execute(
                "SELECT digest, principal, scopes FROM kestrel_door_tokens"
                " WHERE digest = %s AND revoked_at IS NULL",
                (digest,),
            ).fetchone()
        return None if row is None else (bytes(row[0]), str(row[1]), str(row[2]))

    # -- audit ----------------------------------------------------------------------------

    def add_audit(
        self, *, time: str, principal: str, venue: str, tool: str, digest: str, outcome: str
    ) -> None:
        """One row, committed without waiting for the server's disk flush (an audit row
        is written on the door's event loop for every call; like the SQLite door file's
        ``synchronous=NORMAL``, only a crash of the database server or its machine may lose the last
        fraction of a second of rows)."""
        with self._connection() as conn, conn.transaction():
            conn.execute("SET LOCAL synchronous_commit TO off")
            conn.execute(
                "INSERT INTO kestrel_door_audit (time, principal, venue, tool, digest, outcome)"
                " VALUES (%s, %s, %s, %s, %s, %s)",
                (time, principal, venue, tool, digest, outcome),
            )

    def audit(self, principal: str | None, limit: int) -> list[AuditEntry]:
        with self._connection() as conn:
            if principal is None:
                found = conn.execute(
                    "SELECT seq, time, principal, venue, tool, digest, outcome"
                    " FROM kestrel_door_audit ORDER BY seq DESC LIMIT %s",
                    (limit,),
                ).fetchall()
            else:
                found = conn.execute(
                    "SELECT seq, time, principal, venue, tool, digest, outcome"
                    " FROM kestrel_door_audit WHERE principal = %s ORDER BY seq DESC LIMIT %s",
                    (principal, limit),
                ).fetchall()
        return [AuditEntry(*row) for row in reversed(found)]

    # -- quota, offers, vouchers ----------------------------------------------------------

    def count_open_or_offer(
        self, principal: str, day: str, quota: int, offer: tuple[str, str, float]
    ) -> bool:
        with self._connection() as conn, conn.transaction():
            # the row lock serialises replicas counting the same principal's day
            conn.execute(
                "INSERT INTO kestrel_door_opens (principal, day, count) VALUES (%s, %s, 0)"
                " ON CONFLICT (principal, day) DO NOTHING",
                (principal, day),
            )
            row = conn.execute(
                "SELECT count FROM kestrel_door_opens WHERE principal = %s AND day = %s FOR UPDATE",
                (principal, day),
            ).fetchone()
            if row is not None and int(row[0]) < quota:
                conn.execute(_COUNT, (principal, day))
                return True
            conn.execute(
                "INSERT INTO kestrel_door_offers (offer_id, principal, scenario, expires_at)"
                " VALUES (%s, %s, %s, %s)",
                (offer[0], principal, offer[1], offer[2]),
            )
            conn.execute(  # the principal's most recent offers only: storage stays bounded
                "DELETE FROM kestrel_door_offers WHERE principal = %s AND offer_id NOT IN"
                " (SELECT offer_id FROM kestrel_door_offers WHERE principal = %s"
                " ORDER BY expires_at DESC, offer_id DESC LIMIT %s)",
                (principal, principal, OFFERS_KEPT),
            )
            return False

    def pay(
        self,
        offer_id: str,
        principal: str,
        *,
        scenario: str,
        voucher_id: str,
        now: float,
        used_at: str,
        day: str,
    ) -> PaymentOutcome:
        with self._connection() as conn, conn.transaction():
            offer = conn.execute(
                "SELECT principal, scenario, expires_at FROM kestrel_door_offers"
                " WHERE offer_id = %s FOR UPDATE",
                (offer_id,),
            ).fetchone()
            if offer is None or offer[0] != principal or offer[1] != scenario:
                return "no-offer"
            if offer[2] <= now:
                return "expired"
            spent = conn.execute(
                "INSERT INTO kestrel_door_vouchers_used (voucher_id, used_at, principal)"
                " VALUES (%s, %s, %s) ON CONFLICT (voucher_id) DO NOTHING",
                (voucher_id, used_at, principal),
            )
            if spent.rowcount != 1:
                return "used"
            conn.execute("DELETE FROM kestrel_door_offers WHERE offer_id = %s", (offer_id,))
            conn.execute(_COUNT, (principal, day))
            return "paid"

    # -- approvals ------------------------------------------------------------------------

    def grant_approval(self, principal: str, tool: str, at: str) -> None:
        with self._connection() as conn:
            conn.execute(
                "INSERT INTO kestrel_door_approvals (principal, tool, granted_at)"
                " VALUES (%s, %s, %s) ON CONFLICT (principal, tool)"
                " DO UPDATE SET granted_at = EXCLUDED.granted_at",
                (principal, tool, at),
            )

    def take_approval(self, principal: str, tool: str) -> bool:
        with self._connection() as conn:
            cur = conn.execute(
                "DELETE FROM kestrel_door_approvals WHERE principal = %s AND tool = %s",
                (principal, tool),
            )
            return cur.rowcount > 0

    # -- signing keys ---------------------------------------------------------------------

    def signing_keys(self) -> list[tuple[str, bytes, str]]:
        with self._connection() as conn:
            rows = conn.execute(
                "SELECT kid, private, created_at FROM kestrel_door_signing_keys"
                " ORDER BY created_at, kid"
            ).fetchall()
        return [(str(kid), bytes(private), str(at)) for kid, private, at in rows]

    def add_signing_key(self, kid: str, private: bytes, created_at: str) -> None:
        with self._connection() as conn:
            conn.execute(
                "INSERT INTO kestrel_door_signing_keys (kid, private, created_at)"
                " VALUES (%s, %s, %s)",
                (kid, private, created_at),
            )
