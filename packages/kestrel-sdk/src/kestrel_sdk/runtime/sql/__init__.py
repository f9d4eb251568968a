"""The runtime store over SQL, said once: statements, the dialects that render them, and
:class:`SqlStore`, the port's logic the SQLite and PostgreSQL adapters share."""

from __future__ import annotations

from .dialect import POSTGRES, PREFIXES, SQLITE, TABLES, Dialect
from .statements import Statements
from .store import Connection, SqlStore

__all__ = [
    "POSTGRES",
    "PREFIXES",
    "SQLITE",
    "TABLES",
    "Connection",
    "Dialect",
    "SqlStore",
    "Statements",
]
