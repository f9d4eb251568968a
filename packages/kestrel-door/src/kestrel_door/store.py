"""The door's own SQLite file: issued tokens, audit rows, vouchers and quotas.

The SQLite adapter of the ``DoorRecords`` port (``kestrel_protocol.store``). One file
(``door.db`` beside the runtime's, by default in ``$KESTREL_HOME``; WAL) so that the
operator's CLI verbs and a running ``serve`` share state without a server process
between them. The runtime's database is separate: the door's bookkeeping never touches
runtime semantics. (``postgres.py`` is the adapter for a shared PostgreSQL store; the
logic both run is :mod:`.records`'.)
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import ClassVar, Final

from kestrel_protocol import kestrel_home
from kestrel_protocol.sql import SQLITE, Connection
from kestrel_protocol.sqlite_files import connect_private, transaction, use_wal

from .board_records import SQLITE_BOARD_SCHEMA, BoardStatements, SqlBoardRecords
from .records import ARRIVALS_TABLE, DOOR_TABLES, DoorStatements, SqlDoorRecords

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
CREATE TABLE IF NOT EXISTS revoked_keys (  -- signing keys no longer trusted (keys revoke)
    kid TEXT PRIMARY KEY,
    revoked_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS secrets (  -- the door's own secrets: the pseudonym key
    name TEXT PRIMARY KEY,
    value BLOB NOT NULL,
    created_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS approvals (
    principal TEXT NOT NULL,
    tool TEXT NOT NULL,
    granted_at TEXT NOT NULL,
    PRIMARY KEY (principal, tool)
);
"""


_STATEMENTS: Final = DoorStatements.of(SQLITE, "")


class DoorStore(SqlDoorRecords, SqlBoardRecords):
    """``DoorRecords`` (and the board's published proofs) over a serialised SQLite
    connection; every write is its own short transaction."""

    sql: ClassVar[DoorStatements] = _STATEMENTS
    board_sql: ClassVar[BoardStatements] = BoardStatements.of(SQLITE, "")

    def __init__(self, path: str | Path | None = None) -> None:
        self.path = Path(path) if path is not None else kestrel_home() / "door.db"
        self._lock = threading.Lock()
        self._conn = connect_private(self.path, timeout=10.0)  # 0600 from its creation
        use_wal(self._conn)  # several processes may be opening a new file at once
        self._conn.execute("PRAGMA synchronous=NORMAL")
        arrivals = SQLITE.render(ARRIVALS_TABLE, DOOR_TABLES, "")
        self._conn.executescript(f"{_SCHEMA}{arrivals};\n{SQLITE_BOARD_SCHEMA}")

    def _transaction(self) -> AbstractContextManager[Connection]:
        """An immediate (write-locking) transaction, so read-check-write is atomic."""
        return transaction(self._conn, self._lock)

    @contextmanager
    def _connection(self) -> Iterator[Connection]:
        with self._lock:
            yield self._conn

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    @property
    def location(self) -> str:
        return str(self.path)
