"""Which ``DoorRecords`` a door process uses: the store its ``--store`` /
``$KESTREL_STORE`` names (the door's tables sit beside the runtime's).

SQLite: ``door.db`` beside the runtime's file. PostgreSQL: the same database, which
needs the ``postgres`` extra (psycopg 3 and psycopg_pool).
"""

from __future__ import annotations

import os

from kestrel_protocol import KestrelError, RefusalCode
from kestrel_protocol.store import DoorRecords, StoreLocation, store_location

from .store import DoorStore

__all__ = ["open_door_store"]


def open_door_store(
    url: str | StoreLocation | None = None, home: str | os.PathLike[str] | None = None
) -> DoorRecords:
    """The door's records in the store at ``url`` (default ``$KESTREL_STORE``, else
    ``<home>/door.db``); ``BACKEND_UNAVAILABLE`` naming what was wrong otherwise."""
    try:
        location = url if isinstance(url, StoreLocation) else store_location(url, home)
    except ValueError as exc:
        raise KestrelError(RefusalCode.BACKEND_UNAVAILABLE, str(exc)) from None
    if location.kind == "sqlite":
        return DoorStore(location.door_path)
    try:
        from .postgres import PostgresDoorStore  # noqa: PLC0415 - the optional driver
    except ImportError as exc:
        raise KestrelError(
            RefusalCode.BACKEND_UNAVAILABLE,
            f"store {location} needs the PostgreSQL driver ({exc.name} is missing): "
            "pip install 'psycopg[binary]' psycopg-pool",
        ) from None
    assert location.dsn is not None
    return PostgresDoorStore(location.dsn)
