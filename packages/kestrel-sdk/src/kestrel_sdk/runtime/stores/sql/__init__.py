"""The runtime store over SQL, said once: its tables and statements, the dialects that
render them, and
:class:`SqlStore`, the port's logic the SQLite and PostgreSQL adapters share (the
:class:`Connection` they give it is :mod:`kestrel_protocol.sql`'s, as the door's is)."""

from __future__ import annotations

from kestrel_protocol.sql import Connection

from .dialect import POSTGRES, PREFIXES, SQLITE, TABLES, Dialect
from .statements import Statements, upgrade
from .store import SqlStore
from .tables import RUNTIME_TABLES

__all__ = [
    "POSTGRES",
    "PREFIXES",
    "RUNTIME_TABLES",
    "SQLITE",
    "TABLES",
    "Connection",
    "Dialect",
    "SqlStore",
    "Statements",
    "upgrade",
]
