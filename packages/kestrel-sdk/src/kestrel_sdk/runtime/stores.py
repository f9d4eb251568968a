"""Which ``RuntimeStore`` a process uses: the one its ``--store`` / ``$KESTREL_STORE`` names.

SQLite is built in; PostgreSQL needs the ``postgres`` extra (psycopg 3 and psycopg_pool),
imported only when a ``postgresql://`` store is chosen.
"""

from __future__ import annotations

import os

from kestrel_protocol import KestrelError, RefusalCode
from kestrel_protocol.store import RuntimeStore, StoreLocation, store_location

from .sqlite import SqliteStore

__all__ = ["open_runtime_store"]

POSTGRES_EXTRA = "pip install 'psycopg[binary]' psycopg-pool"


def open_runtime_store(
    url: str | StoreLocation | None = None, home: str | os.PathLike[str] | None = None
) -> RuntimeStore:
    """The runtime store at ``url`` (default: ``$KESTREL_STORE``, else ``<home>/kestrel.db``).

    A malformed URL, or PostgreSQL without its driver, is ``BACKEND_UNAVAILABLE``
    naming what was wrong.
    """
    try:
        location = url if isinstance(url, StoreLocation) else store_location(url, home)
    except ValueError as exc:
        raise KestrelError(RefusalCode.BACKEND_UNAVAILABLE, str(exc)) from None
    if location.kind == "sqlite":
        return SqliteStore(path=location.path)
    try:
        from .postgres import PostgresStore  # noqa: PLC0415 - the optional driver
    except ImportError as exc:
        raise KestrelError(
            RefusalCode.BACKEND_UNAVAILABLE,
            f"store {location} needs the PostgreSQL driver ({exc.name} is missing): "
            f"{POSTGRES_EXTRA}",
        ) from None
    assert location.dsn is not None
    return PostgresStore(location.dsn)
