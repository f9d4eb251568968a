"""The door's own SQLite file: issued tokens, audit rows, vouchers and quotas.

The SQLite adapter of the ``DoorRecords`` port (``kestrel_protocol.store``). One file
(``door.db`` beside the runtime's, by default in ``$KESTREL_HOME``; WAL) so that the
operator's CLI verbs and a running ``serve`` share state without a server process
between them. The runtime's database is separate: the door's bookkeeping never touches
runtime semantics. (``postgres.py`` is the adapter for a shared PostgreSQL store; the
logic both run is :mod:`.records`', on the tables of :mod:`.tables`.)
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import ClassVar, Final

from kestrel_protocol import kestrel_home
from kestrel_protocol.sql import SQLITE, Connection
from kestrel_protocol.sqlite_files import connect_private, transaction, use_wal
from kestrel_protocol.store import AuditValues
from kestrel_protocol.tables import create_statements

from .board_records import BoardStatements, SqlBoardRecords
from .checkpoints import BACKSTOP_PAGES, WalCheckpoints
from .records import DoorStatements, SqlDoorRecords
from .seal_records import SealStatements, SqlSealRecords
from .tables import TABLES, TOKENS, TRIAL_COUNTS

__all__ = ["DoorStore"]

_CREATE: Final = create_statements(TABLES, SQLITE, "")
_ADDED_COLUMNS: Final = (
    (TOKENS, ("scenarios", "parent", "expires_at")),
    (TRIAL_COUNTS, ("pseudonym",)),
)
"""The columns a file made before them gains in place, in order: the tokens' (a trial's
scenarios, the token that minted it, when it expires; a token kept from before has no
expiry: it stays as it was issued, never expiring, until the operator revokes it) and
the trial counts' parent pseudonym (filled for the rows kept from before when the file is
opened)."""
_STATEMENTS: Final = DoorStatements.of(SQLITE, "")


class DoorStore(SqlDoorRecords, SqlBoardRecords, SqlSealRecords):
    """``DoorRecords`` (and the board's published proofs) over a serialised SQLite
    connection; every write is its own short transaction. The WAL is checkpointed on a
    thread of its own every so many audit rows (:mod:`.checkpoints`), never by a row's
    commit on the caller's thread."""

    sql: ClassVar[DoorStatements] = _STATEMENTS
    board_sql: ClassVar[BoardStatements] = BoardStatements.of(SQLITE, "")
    seal_sql: ClassVar[SealStatements] = SealStatements.of(SQLITE, "")

    def __init__(self, path: str | Path | None = None) -> None:
        self.path = Path(path) if path is not None else kestrel_home() / "door.db"
        self._lock = threading.Lock()
        self._conn = connect_private(self.path, timeout=10.0)  # 0600 from its creation
        use_wal(self._conn)  # several processes may be opening a new file at once
        self._conn.execute("PRAGMA synchronous=NORMAL")
        self._conn.execute(f"PRAGMA wal_autocheckpoint={BACKSTOP_PAGES}")
        self.checkpoints = WalCheckpoints(self.path)
        with self._transaction() as conn:  # another process opening it meanwhile waits
            for table, added in _ADDED_COLUMNS:
                info = conn.execute(f"PRAGMA table_info({table.name})").fetchall()
                columns = {row[1] for row in info}
                for name in added if columns else ():  # a file made before them
                    if name not in columns:
                        conn.execute(table.add_column(name, SQLITE, ""))
        # then what the file lacks (every table, or an index on a column just added)
        self._conn.executescript("".join(f"{s};\n" for s in _CREATE))
        self._name_trial_parents()  # the counts kept before their pseudonym was

    def _transaction(self) -> AbstractContextManager[Connection]:
        """An immediate (write-locking) transaction, so read-check-write is atomic."""
        return transaction(self._conn, self._lock)

    @contextmanager
    def _connection(self) -> Iterator[Connection]:
        with self._lock:
            yield self._conn

    def add_audits(self, rows: Sequence[AuditValues]) -> None:
        super().add_audits(rows)
        with self._lock:  # counted by one thread at a time
            self.checkpoints.committed(len(rows))

    def close(self) -> None:
        self.checkpoints.stop()
        with self._lock:
            self._conn.close()

    @property
    def location(self) -> str:
        return str(self.path)
