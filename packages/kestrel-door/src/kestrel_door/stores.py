"""Which ``DoorRecords`` a door process uses: the store its ``--store`` /
``$KESTREL_STORE`` names (the door's tables sit beside the runtime's).

SQLite: ``door.db`` beside the runtime's file. PostgreSQL: the same database, which
needs the ``postgres`` extra (psycopg 3 and psycopg_pool). The choosing is
:func:`kestrel_protocol.stores.open_store`'s, as the runtime's is; this is the door's
list. The door keeps no records in memory: its tokens are issued and revoked by other
processes (``kestrel-door token``).
"""

from __future__ import annotations

import os
from typing import Final

from kestrel_protocol.store import DoorRecords, StoreLocation
from kestrel_protocol.stores import StoreAdapters, open_store

from .store import DoorStore

__all__ = ["DOOR_STORES", "open_door_store"]

DOOR_STORES: Final[StoreAdapters[DoorRecords]] = StoreAdapters(
    sqlite=lambda location: DoorStore(location.door_path),
    postgresql="kestrel_door.postgres:PostgresDoorStore",
    postgres_extra="pip install 'psycopg[binary]' psycopg-pool",
    no_memory=(
        "the door keeps its tokens, audit and vouchers where other processes read them "
        "(kestrel-door token ...); use sqlite:///PATH or postgresql://…"
    ),
)


def open_door_store(
    url: str | StoreLocation | None = None, home: str | os.PathLike[str] | None = None
) -> DoorRecords:
    """The door's records in the store at ``url`` (default ``$KESTREL_STORE``, else
    ``<home>/door.db``); ``BACKEND_UNAVAILABLE`` naming what was wrong otherwise."""
    return open_store(DOOR_STORES, url, home)
