"""The store adapters' wing, and which ``RuntimeStore`` a process uses: the one its
``--store`` / ``$KESTREL_STORE`` names.

The adapters of the ``RuntimeStore`` port live here and nowhere else: :mod:`.memory`
(with :mod:`.memory_tables`, :mod:`.memory_feed`, :mod:`.memory_housekeeping`),
:mod:`.sqlite`, :mod:`.postgres` (with :mod:`.postgres_notices`), the SQL they share
(:mod:`.sql`) and what each derives from its rows alike (:mod:`.rows`). The runtime's
session and engine modules hold a ``RuntimeStore`` and reach an adapter only through
:func:`open_runtime_store` (import-linter contract ``store-adapters-in-their-wing``).

SQLite (the default) and memory are built in; PostgreSQL needs the ``postgres`` extra,
imported only when a ``postgresql://`` store is chosen. The choosing is
:func:`kestrel_protocol.stores.open_store`'s, as the door's is; this is the runtime's list.
"""

from __future__ import annotations

import os
from typing import Final

from kestrel_protocol.store import RuntimeStore, StoreLocation
from kestrel_protocol.stores import StoreAdapters, open_store

from .memory import MemoryStore
from .sqlite import SqliteStore

__all__ = ["RUNTIME_STORES", "open_runtime_store"]

RUNTIME_STORES: Final[StoreAdapters[RuntimeStore]] = StoreAdapters(
    sqlite=lambda location: SqliteStore(path=location.path),
    postgresql="kestrel_sdk.runtime.stores.postgres:PostgresStore",
    postgres_extra="pip install 'psycopg[binary]' psycopg-pool",
    memory=lambda location: MemoryStore(),
)


def open_runtime_store(
    url: str | StoreLocation | None = None, home: str | os.PathLike[str] | None = None
) -> RuntimeStore:
    """The runtime store at ``url`` (default: ``$KESTREL_STORE``, else ``<home>/kestrel.db``).

    A malformed URL, or PostgreSQL without its driver, is ``BACKEND_UNAVAILABLE``
    naming what was wrong.
    """
    return open_store(RUNTIME_STORES, url, home)
