"""The door's tables in PostgreSQL: the ``DoorRecords`` port shared by every replica.

Needs the ``postgres`` extra (psycopg 3 and psycopg_pool); nothing else in
the door imports psycopg. Tables are prefixed ``kestrel_door_`` and live in the same
database as the runtime's; they are created on first use under the advisory lock the
runtime's adapter also takes, so replicas starting together do not race; each is written
once for both adapters (:mod:`.tables`). Audit rows are append-only: a trigger refuses
UPDATE and DELETE, as the SQLite adapter's does.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import ClassVar, Final

from kestrel_protocol.postgres import PostgresDatabase
from kestrel_protocol.sql import POSTGRES, Connection
from kestrel_protocol.tables import create_statements

from .board_records import BoardStatements, SqlBoardRecords
from .records import DoorStatements, SqlDoorRecords
from .seal_records import SealStatements, SqlSealRecords
from .tables import TABLES, TOKENS, TRIAL_COUNTS

__all__ = ["SCHEMA_VERSION", "UPGRADES", "PostgresDoorStore"]

SCHEMA_VERSION = "6"
"""2: an issued token keeps the only scenarios its principal sees (a trial's); 3: and the
issued token that minted it (a trial's parent); 4: and when it expires (a replica of 3
would accept an expired token: a new version); 5: each trial's number among its parent's
(tables of their own, made by the schema's statements; a replica of 4 would mint trials
without a number: a new version); 6: each trial count keeps its parent's pseudonym (the
public count is one lookup; a replica of 5 would add counts no lookup finds: a new
version; the rows of a database of 5 are named when a door opens it). A database of 1,
2, 3, 4 or 5 is upgraded in place when a door first opens it (:data:`UPGRADES`); then
every statement of the schema runs, so a database of any of them gains the index on
``tokens.parent`` (no new version: it changes nothing a replica of the release before
reads or writes)."""
_SCENARIOS: Final = TOKENS.add_column("scenarios", POSTGRES, "kestrel_door_")
_PARENT: Final = TOKENS.add_column("parent", POSTGRES, "kestrel_door_")
_EXPIRES: Final = TOKENS.add_column("expires_at", POSTGRES, "kestrel_door_")
_PSEUDONYM: Final = TRIAL_COUNTS.add_column("pseudonym", POSTGRES, "kestrel_door_")
UPGRADES: Final = {  # before 5 there were no trial counts: made with the column
    "1": (_SCENARIOS, _PARENT, _EXPIRES),
    "2": (_PARENT, _EXPIRES),
    "3": (_EXPIRES,),
    "4": (),
    "5": (_PSEUDONYM,),
}

_SCHEMA: Final = create_statements(TABLES, POSTGRES, "kestrel_door_")
"""Every statement idempotent: run on each start (a database made before a table was
kept gains it)."""

_STATEMENTS: Final = DoorStatements.of(POSTGRES, "kestrel_door_")

_NOW: Final = (
    "SELECT to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"')"
)
"""The server's clock as ``door_time`` writes one (its time now, not its transaction's)."""


class PostgresDoorStore(PostgresDatabase, SqlDoorRecords, SqlBoardRecords, SqlSealRecords):
    """``DoorRecords`` (and the board's published proofs) over a PostgreSQL database
    (``postgresql://…``)."""

    sql: ClassVar[DoorStatements] = _STATEMENTS
    board_sql: ClassVar[BoardStatements] = BoardStatements.of(POSTGRES, "kestrel_door_")
    seal_sql: ClassVar[SealStatements] = SealStatements.of(POSTGRES, "kestrel_door_")

    def __init__(self, dsn: str, *, pool_size: int = 4) -> None:
        super().__init__(dsn, pool_size=pool_size, name="kestrel-door")
        self._create_schema(_SCHEMA, "door", SCHEMA_VERSION, UPGRADES)
        self._name_trial_parents()  # the counts kept before their pseudonym was

    def now(self) -> str:
        """The database server's clock: every replica and every feed on this store stamp
        arrivals and publications by it, whatever their own hosts' clocks say."""
        with self._connection() as conn:
            row = conn.execute(_NOW).fetchone()
        assert row is not None  # a SELECT without FROM: one row
        return str(row[0])

    @contextmanager
    def _audit_transaction(self, rows: int) -> Iterator[Connection]:
        """Committed without waiting for the server's disk flush (an audit row is written
        on the door's event loop for every call; like the SQLite door file's
        ``synchronous=NORMAL``, only a crash of the database server or its machine may
        lose the last fraction of a second of rows)."""
        with self._transaction() as conn:
            conn.execute("SET LOCAL synchronous_commit TO off")
            yield conn
