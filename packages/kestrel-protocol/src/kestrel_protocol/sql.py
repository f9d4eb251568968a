"""What differs between the SQL databases the stores use: a :class:`Dialect`.

Each table is written once too (:mod:`.tables`); a dialect renders its column types, its
serial column, SQLite's ``WITHOUT ROWID`` and how an append-only table refuses changes.

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


@dataclass(frozen=True, slots=True, kw_only=True)
class Dialect:
    """How one database spells placeholders, row locks, the time and a table's parts."""

    name: str
    placeholder: str  # what a ``?`` becomes
    for_share: str  # a read that a writer must wait for ('' where a write locks the file)
    for_update: str  # a read that locks a row until the transaction ends
    now: str  # the database's time now, as UTC text ``YYYY-MM-DDTHH:MM:SSZ``
    bytes: str  # the type of a column of bytes
    double: str  # the type of a column of floating-point numbers
    serial: str  # the type of a column numbering rows as they are inserted
    serial_is_key: bool  # a serial column is the table's primary key (its other key: unique)
    autoincrement: str  # after ``serial``: numbers of deleted rows are never reused
    without_rowid: str  # after a table kept in its key's order (SQLite's ``WITHOUT ROWID``)
    append_only: tuple[str, ...]  # what refuses UPDATE and DELETE on a table ({table},
    # its name, and {name}, its unprefixed name): each an idempotent statement

    def render(self, statement: str, tables: Iterable[str], prefix: str) -> str:
        """``statement`` in this dialect: each of ``tables`` named ``prefix`` + name,
        locks spelled, placeholders."""
        names = {name: prefix + name for name in tables}
        text = statement.format(
            **names, for_share=self.for_share, for_update=self.for_update, now=self.now
        )
        return text.replace("?", self.placeholder)


SQLITE: Final = Dialect(
    name="sqlite",
    placeholder="?",
    for_share="",
    for_update="",
    now="strftime('%Y-%m-%dT%H:%M:%SZ', 'now')",
    bytes="BLOB",
    double="REAL",
    serial="INTEGER PRIMARY KEY",  # the rowid
    serial_is_key=True,
    autoincrement=" AUTOINCREMENT",
    without_rowid=" WITHOUT ROWID",
    append_only=(
        "CREATE TRIGGER IF NOT EXISTS {table}_no_update BEFORE UPDATE ON {table}\n"
        "BEGIN SELECT RAISE(ABORT, '{name} rows are append-only'); END",
        "CREATE TRIGGER IF NOT EXISTS {table}_no_delete BEFORE DELETE ON {table}\n"
        "BEGIN SELECT RAISE(ABORT, '{name} rows are append-only'); END",
    ),
)
"""SQLite: one writer at a time (``BEGIN IMMEDIATE`` takes the file), so no row locks."""
POSTGRES: Final = Dialect(
    name="postgresql",
    placeholder="%s",
    for_share=" FOR SHARE",
    for_update=" FOR UPDATE",
    now="""to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')""",
    bytes="BYTEA",
    double="DOUBLE PRECISION",
    serial="BIGSERIAL",
    serial_is_key=False,
    autoincrement="",  # a sequence never goes back
    without_rowid="",
    append_only=(
        # the trigger and its function, made once (CREATE TRIGGER has no IF NOT EXISTS
        # before PostgreSQL 14)
        """DO $$ BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_trigger WHERE tgrelid = '{table}'::regclass
                   AND tgname = '{table}_append_only') THEN
        CREATE OR REPLACE FUNCTION {table}_append_only() RETURNS trigger LANGUAGE plpgsql
            AS $f$ BEGIN RAISE EXCEPTION '{name} rows are append-only'; END $f$;
        CREATE TRIGGER {table}_append_only BEFORE UPDATE OR DELETE ON {table}
            FOR EACH ROW EXECUTE FUNCTION {table}_append_only();
    END IF;
END $$""",
    ),
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
