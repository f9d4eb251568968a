"""One PostgreSQL database as both ports' adapters use it: written once for the runtime's
store (``kestrel_sdk.runtime.stores.postgres``) and the door's records (``kestrel_door.postgres``).

Needs the ``postgres`` extra (psycopg 3 and psycopg_pool); only those two adapters import
this module, and they are imported only when a ``postgresql://`` store is chosen.
:class:`PostgresDatabase` gives an adapter:

- a pool of autocommit connections, opened at once or refused: ``BACKEND_UNAVAILABLE``
  naming the store (its password hidden) and the driver's reason (its secrets scrubbed);
- :meth:`~PostgresDatabase._connection` (each statement commits on its own) and
  :meth:`~PostgresDatabase._transaction` (committed when the block ends, rolled back when
  it raises). An outage met on either (the server gone, a connection dropped mid-way, no
  pooled connection within :data:`~.outage.POOL_WAIT_S`) is refused as ``store
  unavailable`` (:func:`~.outage.store_unavailable`; nothing of a transaction it cut is
  kept). A connection broken by a server restart is replaced, not handed out, and the
  pool reconnects by itself when the server returns;
- :meth:`~PostgresDatabase._create_schema`: a port's tables created on first use under
  one advisory lock (so replicas starting together do not race) and its schema version
  checked, in ``kestrel_meta`` (:data:`.tables.META`, created here for every port).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, Final

import psycopg
import psycopg_pool

from .errors import KestrelError, RefusalCode
from .outage import POOL_WAIT_S, RECONNECT_WINDOW_S, driver_reason, store_unavailable
from .sql import POSTGRES, SqlAdapter
from .store import StoreLocation
from .tables import META

__all__ = ["SCHEMA_LOCK", "PostgresDatabase"]

SCHEMA_LOCK: Final = 0x6B657374
"""The ``pg_advisory_xact_lock`` key every port holds while creating or checking its schema."""


class PostgresDatabase(SqlAdapter):
    """A pool of connections to the database at ``dsn``, with the store's refusals."""

    def __init__(self, dsn: str, *, pool_size: int, name: str) -> None:
        self._dsn = dsn
        self._location = str(StoreLocation("postgresql", dsn=dsn))
        self._pool: psycopg_pool.ConnectionPool[Any] = psycopg_pool.ConnectionPool(
            dsn,
            min_size=1,
            max_size=pool_size,
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
            self._pool.open(wait=True, timeout=30.0)
        except (psycopg.Error, psycopg_pool.PoolTimeout) as exc:
            self._pool.close()
            raise KestrelError(
                RefusalCode.BACKEND_UNAVAILABLE,
                f"the store {self._location} is unavailable: {driver_reason(exc, dsn)}",
            ) from None

    @property
    def location(self) -> str:
        """The store's location, its password hidden."""
        return self._location

    def close(self) -> None:
        """Close the pool (idempotent)."""
        self._pool.close()

    @contextmanager
    def _connection(self) -> Iterator[psycopg.Connection[Any]]:
        """A pooled autocommit connection: each statement commits on its own."""
        try:
            with self._pool.connection() as conn:
                yield conn
        except psycopg.OperationalError as exc:  # server gone, pool exhausted ...
            raise store_unavailable(self._dsn, exc) from None

    @contextmanager
    def _transaction(self) -> Iterator[psycopg.Connection[Any]]:
        """A pooled connection in a transaction, committed when the block ends (rolled
        back when it raises)."""
        with self._connection() as conn, conn.transaction():
            yield conn

    def _create_schema(
        self,
        statements: Sequence[str],
        key: str,
        version: str,
        upgrades: Mapping[str, Sequence[str]] | None = None,
    ) -> None:
        """Check the schema ``key`` is at ``version`` and run ``statements`` (each
        idempotent: what a database made before lacks, it gains), whichever process gets
        there first. A database at a version in ``upgrades`` is first upgraded in place by
        its statements, so that ``statements`` may name what an upgrade adds (an index on
        an added column); all in one transaction, under one lock. ``BACKEND_UNAVAILABLE``,
        nothing run, when it has another version."""
        with self._transaction() as conn:
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (SCHEMA_LOCK,))
            for statement in META.create(POSTGRES, "kestrel_"):
                conn.execute(statement)
            row = conn.execute("SELECT value FROM kestrel_meta WHERE key = %s", (key,)).fetchone()
            found = version if row is None else str(row[0])  # a new database: made current
            upgrade = (upgrades or {}).get(found)
            if found == version or upgrade is not None:
                for statement in [*(upgrade or ()), *statements]:
                    conn.execute(statement)
                conn.execute(
                    "INSERT INTO kestrel_meta (key, value) VALUES (%s, %s)"
                    " ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                    (key, version),
                )
                found = version
        if found != version:
            raise KestrelError(
                RefusalCode.BACKEND_UNAVAILABLE,
                f"the database has {key} schema {found}; this Kestrel needs schema {version}",
            )
