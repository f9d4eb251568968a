"""The door's own SQLite file: issued tokens, audit rows, vouchers and quotas.

The SQLite adapter of the ``DoorRecords`` port (``kestrel_protocol.store``). One file
(``door.db`` beside the runtime's, by default in ``$KESTREL_HOME``; WAL) so that the
operator's CLI verbs and a running ``serve`` share state without a server process
between them. The runtime's database is separate: the door's bookkeeping never touches
runtime semantics. (``postgres.py`` is the adapter for a shared PostgreSQL store.)
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from kestrel_protocol import kestrel_home
from kestrel_protocol.sqlite_files import connect_private, use_wal
from kestrel_protocol.store import OFFERS_KEPT, AuditEntry, PaymentOutcome, TokenEntry

__all__ = ["DoorStore"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS tokens (
    id TEXT PRIMARY KEY,
    digest BLOB NOT NULL UNIQUE,
    principal TEXT NOT NULL,
    scopes TEXT NOT NULL,
    label TEXT,
    created_at TEXT NOT NULL,
    revoked_at TEXT
);
CREATE TABLE IF NOT EXISTS audit (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    time TEXT NOT NULL,
    principal TEXT NOT NULL,
    venue TEXT NOT NULL,
    tool TEXT NOT NULL,
    digest TEXT NOT NULL,
    outcome TEXT NOT NULL
);
CREATE TRIGGER IF NOT EXISTS audit_no_update BEFORE UPDATE ON audit
BEGIN SELECT RAISE(ABORT, 'audit rows are append-only'); END;
CREATE TRIGGER IF NOT EXISTS audit_no_delete BEFORE DELETE ON audit
BEGIN SELECT RAISE(ABORT, 'audit rows are append-only'); END;
CREATE TABLE IF NOT EXISTS opens (
    principal TEXT NOT NULL,
    day TEXT NOT NULL,
    count INTEGER NOT NULL,
    PRIMARY KEY (principal, day)
);
CREATE TABLE IF NOT EXISTS offers (
    offer_id TEXT PRIMARY KEY,
    principal TEXT NOT NULL,
    scenario TEXT NOT NULL,
    expires_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS vouchers_used (
    voucher_id TEXT PRIMARY KEY,
    used_at TEXT NOT NULL,
    principal TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS signing_keys (  -- the door's Ed25519 keys (attested grades)
    kid TEXT PRIMARY KEY,
    private BLOB NOT NULL,  -- the raw 32-byte private key
    created_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS approvals (
    principal TEXT NOT NULL,
    tool TEXT NOT NULL,
    granted_at TEXT NOT NULL,
    PRIMARY KEY (principal, tool)
);
"""


class DoorStore:
    """``DoorRecords`` over a serialised SQLite connection; every write is its own short
    transaction."""

    def __init__(self, path: str | Path | None = None) -> None:
        self.path = Path(path) if path is not None else kestrel_home() / "door.db"
        self._lock = threading.Lock()
        self._conn = connect_private(self.path, timeout=10.0)  # 0600 from its creation
        use_wal(self._conn)  # several processes may be opening a new file at once
        self._conn.execute("PRAGMA synchronous=NORMAL")
        self._conn.executescript(_SCHEMA)

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """An immediate (write-locking) transaction, so read-check-write is atomic."""
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                yield self._conn
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            self._conn.execute("COMMIT")

    @contextmanager
    def read(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            yield self._conn

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    @property
    def location(self) -> str:
        return str(self.path)

    # -- issued tokens ------------------------------------------------------------------

    def add_token(self, row: TokenEntry, digest: bytes) -> None:
        with self.transaction() as db:
            db.execute(
                "INSERT INTO tokens (id, digest, principal, scopes, label, created_at)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                (row.id, digest, row.principal, row.scopes, row.label, row.created_at),
            )

    def tokens(self) -> list[TokenEntry]:
        with self.read() as db:
            rows = db.execute(
                "SELECT id, principal, scopes, label, created_at, revoked_at FROM tokens"
                " ORDER BY created_at, id"
            ).fetchall()
        return [TokenEntry(*row) for row in rows]

    def revoke_token(self, token_id: str, at: str) -> bool:
        with self.transaction() as db:
            cur = db.execute(
                "UPDATE tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL",
                (at, token_id),
            )
            return cur.rowcount > 0

    def token_grant(self, digest: bytes) -> tuple[bytes, str, str] | None:
        with self.read() as db:
            row = db.execute(
                "SELECT digest, principal, scopes FROM tokens"
                " WHERE digest = ? AND revoked_at IS NULL",
                (digest,),
            ).fetchone()
        return None if row is None else (bytes(row[0]), str(row[1]), str(row[2]))

    # -- audit ----------------------------------------------------------------------------

    def add_audit(
        self, *, time: str, principal: str, venue: str, tool: str, digest: str, outcome: str
    ) -> None:
        with self.transaction() as db:
            db.execute(
                "INSERT INTO audit (time, principal, venue, tool, digest, outcome)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                (time, principal, venue, tool, digest, outcome),
            )

    def audit(self, principal: str | None, limit: int) -> list[AuditEntry]:
        """The newest ``limit`` rows, oldest first, optionally for one principal."""
        query = "SELECT seq, time, principal, venue, tool, digest, outcome FROM audit"
        params: tuple[object, ...] = ()
        if principal is not None:
            query += " WHERE principal = ?"
            params = (principal,)
        query += " ORDER BY seq DESC LIMIT ?"
        with self.read() as db:
            found = db.execute(query, (*params, limit)).fetchall()
        return [AuditEntry(*row) for row in reversed(found)]

    # -- quota, offers, vouchers ----------------------------------------------------------

    def count_open_or_offer(
        self, principal: str, day: str, quota: int, offer: tuple[str, str, float]
    ) -> bool:
        with self.transaction() as db:
            row = db.execute(
                "SELECT count FROM opens WHERE principal = ? AND day = ?", (principal, day)
            ).fetchone()
            if (0 if row is None else int(row[0])) < quota:
                _count(db, principal, day)
                return True
            db.execute(
                "INSERT INTO offers (offer_id, principal, scenario, expires_at)"
                " VALUES (?, ?, ?, ?)",
                (offer[0], principal, offer[1], offer[2]),
            )
            db.execute(  # the principal's most recent offers only: storage stays bounded
                "DELETE FROM offers WHERE principal = ?1 AND offer_id NOT IN (SELECT offer_id"
                " FROM offers WHERE principal = ?1 ORDER BY expires_at DESC, rowid DESC"
                " LIMIT ?2)",
                (principal, OFFERS_KEPT),
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
        with self.transaction() as db:
            offer = db.execute(
                "SELECT principal, scenario, expires_at FROM offers WHERE offer_id = ?",
                (offer_id,),
            ).fetchone()
            if offer is None or offer[0] != principal or offer[1] != scenario:
                return "no-offer"
            if offer[2] <= now:
                return "expired"
            try:
                db.execute(
                    "INSERT INTO vouchers_used (voucher_id, used_at, principal) VALUES (?, ?, ?)",
                    (voucher_id, used_at, principal),
                )
            except sqlite3.IntegrityError:
                return "used"
            db.execute("DELETE FROM offers WHERE offer_id = ?", (offer_id,))
            _count(db, principal, day)
            return "paid"

    # -- approvals ------------------------------------------------------------------------

    def grant_approval(self, principal: str, tool: str, at: str) -> None:
        with self.transaction() as db:
            db.execute(
                "INSERT OR REPLACE INTO approvals (principal, tool, granted_at) VALUES (?, ?, ?)",
                (principal, tool, at),
            )

    def take_approval(self, principal: str, tool: str) -> bool:
        with self.transaction() as db:
            cur = db.execute(
                "DELETE FROM approvals WHERE principal = ? AND tool = ?", (principal, tool)
            )
            return cur.rowcount > 0

    # -- signing keys ---------------------------------------------------------------------

    def signing_keys(self) -> list[tuple[str, bytes, str]]:
        with self.read() as db:
            rows = db.execute(
                "SELECT kid, private, created_at FROM signing_keys ORDER BY created_at, kid"
            ).fetchall()
        return [(str(kid), bytes(private), str(at)) for kid, private, at in rows]

    def add_signing_key(self, kid: str, private: bytes, created_at: str) -> None:
        with self.transaction() as db:
            db.execute(
                "INSERT INTO signing_keys (kid, private, created_at) VALUES (?, ?, ?)",
                (kid, private, created_at),
            )


def _count(db: sqlite3.Connection, principal: str, day: str) -> None:
    db.execute(
        "INSERT INTO opens (principal, day, count) VALUES (?, ?, 1)"
        " ON CONFLICT (principal, day) DO UPDATE SET count = count + 1",
        (principal, day),
    )
