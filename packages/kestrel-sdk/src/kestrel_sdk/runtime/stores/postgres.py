"""PostgreSQL persistence: the ``RuntimeStore`` port shared by any number of processes.

Needs the ``postgres`` extra (psycopg 3 and psycopg_pool); nothing else imports psycopg.
The port's logic is :class:`.sql.SqlStore`'s, shared with SQLite; this adapter gives it
the connections of :class:`kestrel_protocol.postgres.PostgresDatabase` (a pool, shared in
kind with the door's records: an outage is refused as ``store unavailable``). The schema
is created on first use, under an advisory lock so that replicas starting together do not
race. Tables are prefixed ``kestrel_`` so a database may be shared with other applications
(one of its own is simpler).

The journal is keyed ``(session, seq)``: two processes racing on one session cannot both
append a seq, so a session is never forked; the loser gets :class:`JournalConflict`,
catches up from the journal and applies after the winner. An append also takes a
``FOR SHARE`` lock on its session row, which the close (``FOR UPDATE``) waits for and then
re-reads, so no submission lands after the record that closes its session.

An append of bars to a forward tape notifies the store's feed channel in its
transaction; :meth:`PostgresStore.listen_feeds` listens (:mod:`.postgres_notices`).

A step is one transaction with what it marks by its principal's horizon row (the row
read ``FOR UPDATE``: see ``SqlStore.append``): the journal row, the read, and, when due,
the note (``add_read``) and the raise (``raise_horizon``), which join it
(:meth:`PostgresStore._marking`: the store's statements in the stepping thread run on its
connection until it ends), so a process killed after the commit leaves no step unmarked.

Durability: an accepted submission is committed before the response is returned, so it
is on the server; what survives the *server's* crash is the
server's setting (``synchronous_commit``; on by default: flushed to its WAL). psycopg
prepares a statement on the server once it has run a few times.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, ClassVar, Final

import psycopg
from kestrel_protocol.postgres import PostgresDatabase
from kestrel_protocol.tables import create_statements

from .postgres_notices import FeedNotices, feed_channel
from .sql import (
    POSTGRES,
    PREFIXES,
    RUNTIME_TABLES,
    TABLES,
    Connection,
    SqlStore,
    Statements,
    upgrade,
)

__all__ = ["SCHEMA_VERSION", "UPGRADES", "PostgresStore"]

SCHEMA_VERSION = "7"
"""7: each bar of a forward tape keeps the clock read after its append committed
(``visible_by``); a database of 6 (without it), 5 (nor each session its lineage, each
journal row the clock bar its step reached), 4 (horizon rows keyed by scenario ids, not
lineage tags) or 3 (before each session kept whether it was counted on its principal's
horizon row) is upgraded in place when a store first opens it (:data:`UPGRADES`)."""
UPGRADES: Final = {str(3 + since): upgrade(POSTGRES, since) for since in range(4)}

_SCHEMA: Final = create_statements(RUNTIME_TABLES, POSTGRES, PREFIXES[POSTGRES.name])

_STATEMENTS: Final = Statements.of(POSTGRES)


class PostgresStore(PostgresDatabase, SqlStore):
    """The ``RuntimeStore`` port over a PostgreSQL database (``postgresql://…``)."""

    shared = True
    sql: ClassVar[Statements] = _STATEMENTS
    duplicate: ClassVar[tuple[type[Exception], ...]] = (
        psycopg.errors.UniqueViolation,
        psycopg.errors.NotNullViolation,
    )

    def __init__(self, dsn: str, *, pool_size: int = 16) -> None:
        super().__init__(dsn, pool_size=pool_size, name="kestrel-runtime")
        self._joined = _Joined()
        self._create_schema(_SCHEMA, "runtime", SCHEMA_VERSION, UPGRADES)
        with self._connection() as conn:
            schema = conn.execute("SELECT current_schema()").fetchone()
        self.feed_channel = feed_channel(str(schema[0] if schema else ""))
        """The channel every append to this store notifies (:mod:`.postgres_notices`)."""

    def listen_feeds(self) -> FeedNotices:
        """A new connection listening on :attr:`feed_channel` (its caller closes it)."""
        return FeedNotices(self._dsn, self.feed_channel)

    def _announce(self, conn: Connection, scenario_id: str) -> None:
        conn.execute("SELECT pg_notify(%s, %s)", (self.feed_channel, scenario_id))

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

    @contextmanager
    def _marking(self) -> Iterator[Connection]:
        """A step's transaction, joined by every statement of the store made in this
        thread until it ends (its marks: ``add_read``, ``raise_horizon``), which would
        otherwise take another pooled connection, commit apart, and wait for the row the
        step holds locked."""
        with super()._transaction() as conn:
            self._joined.conn = conn
            try:
                yield conn
            finally:
                self._joined.conn = None

    @contextmanager
    def _connection(self) -> Iterator[psycopg.Connection[Any]]:
        joined = self._joined.conn
        if joined is not None:
            yield joined
        else:
            with super()._connection() as conn:
                yield conn

    @contextmanager
    def _transaction(self) -> Iterator[psycopg.Connection[Any]]:
        joined = self._joined.conn
        if joined is not None:
            yield joined
        else:
            with super()._transaction() as conn:
                yield conn


class _Joined(threading.local):
    """The connection of the step this thread has open (:meth:`PostgresStore._marking`)."""

    conn: psycopg.Connection[Any] | None = None
