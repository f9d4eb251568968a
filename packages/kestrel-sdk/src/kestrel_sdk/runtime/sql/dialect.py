"""What differs between the SQL databases the runtime stores in: a :class:`Dialect`.

The runtime's statements (:mod:`.statements`) are written once, with ``?`` placeholders,
``{name}`` for a table and ``{for_share}`` / ``{for_update}`` where a row lock goes; a
dialect renders them for its database. Both databases take the rest as written
(``ON CONFLICT ... DO NOTHING`` / ``DO UPDATE SET ... = excluded...``, joins, ``coalesce``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

__all__ = ["POSTGRES", "SQLITE", "TABLES", "Dialect"]

TABLES: Final = ("meta", "artifacts", "sessions", "owners", "journal", "lookahead", "operations")
"""The runtime's tables, by their unprefixed names."""


@dataclass(frozen=True, slots=True)
class Dialect:
    """How one database spells placeholders, table names and row locks."""

    name: str
    placeholder: str  # what a ``?`` becomes
    prefix: str  # before every table name
    for_share: str  # a read that a close must wait for ('' where a write locks the file)
    for_update: str  # a read that locks a row until the transaction ends

    def table(self, name: str) -> str:
        return self.prefix + name

    def render(self, statement: str) -> str:
        """``statement`` in this dialect: tables named, locks spelled, placeholders."""
        names = {name: self.table(name) for name in TABLES}
        text = statement.format(**names, for_share=self.for_share, for_update=self.for_update)
        return text.replace("?", self.placeholder)


SQLITE: Final = Dialect("sqlite", "?", "", "", "")
"""SQLite: one writer at a time (``BEGIN IMMEDIATE`` takes the file), so no row locks."""
POSTGRES: Final = Dialect("postgresql", "%s", "kestrel_", " FOR SHARE", " FOR UPDATE")
"""PostgreSQL: tables prefixed ``kestrel_`` (a database may be shared with other
applications), rows locked where a close and a step meet."""
