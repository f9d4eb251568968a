"""What differs between the SQL databases the stores use: a :class:`Dialect`.

Both ports (the runtime's and the door's) write each statement once, with ``?``
placeholders, ``{name}`` for a table, ``{for_share}`` / ``{for_update}`` where a row
lock goes and ``{now}`` for the database's own time (UTC, ``2026-11-01T09:30:00Z``); a
dialect renders them for its database, with the port's table prefix. Both
databases take the rest as written (``ON CONFLICT ... DO NOTHING`` / ``DO UPDATE SET ... =
excluded...``, joins, ``coalesce``).

Each port's logic over SQL (the runtime's ``SqlStore``, the door's ``SqlDoorRecords``) is
an :class:`SqlAdapter`: it runs its statements on the :class:`Connection` its adapter
gives it.
"""

from __future__ import annotations

from collections.abc import Iterable
from contextlib import AbstractContextManager
from dataclasses import dataclass, fields
from typing import Any, Final, Protocol, TypeVar

__all__ = ["POSTGRES", "SQLITE", "Connection", "Dialect", "SqlAdapter", "render_all"]

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Dialect:
    """How one database spells placeholders, row locks and the time."""

    name: str
    placeholder: str  # what a ``?`` becomes
    for_share: str  # a read that a writer must wait for ('' where a write locks the file)
    for_update: str  # a read that locks a row until the transaction ends
    now: str  # the database's time now, as UTC text ``YYYY-MM-DDTHH:MM:SSZ``

    def render(self, statement: str, tables: Iterable[str], prefix: str) -> str:
        """``statement`` in this dialect: each of ``tables`` named ``prefix`` + name,
        locks spelled, placeholders."""
        names = {name: prefix + name for name in tables}
        text = statement.format(
            **names, for_share=self.for_share, for_update=self.for_update, now=self.now
        )
        return text.replace("?", self.placeholder)


SQLITE: Final = Dialect("sqlite", "?", "", "", "strftime('%Y-%m-%dT%H:%M:%SZ', 'now')")
"""SQLite: one writer at a time (``BEGIN IMMEDIATE`` takes the file), so no row locks."""
POSTGRES: Final = Dialect(
    "postgresql",
    "%s",
    " FOR SHARE",
    " FOR UPDATE",
    """to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')""",
)
"""PostgreSQL: rows locked where two writers meet."""


def render_all(statements: T, dialect: Dialect, tables: Iterable[str], prefix: str) -> T:
    """A copy of a dataclass of statements, each rendered by :meth:`Dialect.render`."""
    names = tuple(tables)
    return type(statements)(
        **{
            f.name: dialect.render(getattr(statements, f.name), names, prefix)
            for f in fields(statements)  # type: ignore[arg-type]
        }
    )


class Connection(Protocol):
    """What both drivers' connections (``sqlite3``, psycopg 3) offer alike."""

    def execute(self, sql: Any, params: Any = ..., /) -> Any: ...


class SqlAdapter:
    """What a port's logic over SQL asks of its adapter (SQLite's, PostgreSQL's)."""

    @property
    def location(self) -> str:
        """Where the store is (a password hidden)."""
        raise NotImplementedError

    def _connection(self) -> AbstractContextManager[Connection]:
        """A connection on which each statement commits on its own."""
        raise NotImplementedError

    def _transaction(self) -> AbstractContextManager[Connection]:
        """A connection in a transaction, committed when the block ends (rolled back
        when it raises)."""
        raise NotImplementedError
