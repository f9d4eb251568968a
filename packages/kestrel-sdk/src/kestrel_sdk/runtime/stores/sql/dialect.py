"""The runtime store's table names and how each SQL database prefixes them.

The dialects themselves (placeholders, row locks, column types) are
:mod:`kestrel_protocol.sql`'s, shared with the door's port, and the tables are declared
in :mod:`.tables`; here are the tables' names and their prefix per database
(PostgreSQL's are ``kestrel_``, so a database may be shared with other applications).
"""

from __future__ import annotations

from typing import Final

from kestrel_protocol.sql import POSTGRES, SQLITE, Dialect
from kestrel_protocol.tables import META

from .tables import RUNTIME_TABLES

__all__ = ["POSTGRES", "PREFIXES", "SQLITE", "TABLES", "Dialect"]

TABLES: Final = tuple(table.name for table in (META, *RUNTIME_TABLES))
"""The runtime's tables, by their unprefixed names."""
PREFIXES: Final = {SQLITE.name: "", POSTGRES.name: "kestrel_"}
"""Each database's prefix of the runtime's table names."""
