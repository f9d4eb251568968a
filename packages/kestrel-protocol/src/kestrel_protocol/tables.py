"""Each table of the stores written once, as a :class:`Table` a dialect renders.

A port declares its tables once (the runtime's in ``kestrel_sdk.runtime.stores.sql``'s
``tables``, the door's in ``kestrel_door.tables``) and each of its adapters creates them
with :func:`create_statements` in its :class:`~.sql.Dialect`, under its prefix. What the
databases spell differently is the dialect's (:mod:`.sql`): bytes and floating-point
types, a serial column (SQLite's rowid, ``INTEGER PRIMARY KEY``, which is then the
table's primary key and its declared key a unique one; PostgreSQL's ``BIGSERIAL``),
SQLite's ``WITHOUT ROWID``, and how an append-only table refuses UPDATE and DELETE.

A column is ``NOT NULL`` unless it says ``null``; one key column is declared inline
(``root TEXT PRIMARY KEY``), several as a ``PRIMARY KEY (...)`` constraint. :data:`META`
is the table every database keeps its schema versions in (on PostgreSQL one table,
``kestrel_meta``, for every port: :mod:`.postgres` creates it).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final, Literal

from .sql import Dialect

__all__ = ["META", "Column", "ColumnType", "Index", "Table", "create_statements"]

ColumnType = Literal["text", "integer", "real", "bytes", "serial"]


@dataclass(frozen=True, slots=True)
class Column:
    """A column: its name, its type, whether it may be NULL and whether it is unique."""

    name: str
    type: ColumnType
    null: bool = False
    unique: bool = False
    autoincrement: bool = False  # a serial whose numbers are never reused (SQLite's
    # ``AUTOINCREMENT``; a PostgreSQL sequence never goes back)


@dataclass(frozen=True, slots=True)
class Index:
    """An index of a table: ``CREATE INDEX {prefix}{name} ON {table} [USING using]
    (columns) [WHERE where]``, in every dialect or ``only`` the one named."""

    name: str
    columns: str
    using: str = ""
    where: str = ""
    only: str = ""


@dataclass(frozen=True, slots=True)
class Table:
    """A table, by its unprefixed name: its columns in order, its primary key, its other
    unique column sets and its indexes; ``without_rowid``: SQLite keeps it in its key's
    order; ``append_only``: UPDATE and DELETE are refused."""

    name: str
    columns: tuple[Column, ...]
    key: tuple[str, ...]
    unique: tuple[tuple[str, ...], ...] = ()
    indexes: tuple[Index, ...] = ()
    without_rowid: bool = False
    append_only: bool = False

    def create(self, dialect: Dialect, prefix: str) -> list[str]:
        """The statements creating the table, its indexes and guards (each idempotent)."""
        table = prefix + self.name
        serial = any(c.type == "serial" for c in self.columns)
        demoted = serial and dialect.serial_is_key  # the declared key becomes unique
        parts = [self._column(c, dialect, demoted) for c in self.columns]
        if len(self.key) > 1:
            parts.append(f"{'UNIQUE' if demoted else 'PRIMARY KEY'} ({', '.join(self.key)})")
        parts += [f"UNIQUE ({', '.join(columns)})" for columns in self.unique]
        rowid = dialect.without_rowid if self.without_rowid else ""
        body = ",\n    ".join(parts)
        statements = [f"CREATE TABLE IF NOT EXISTS {table} (\n    {body}\n){rowid}"]
        for index in self.indexes:
            if index.only in ("", dialect.name):
                using = f" USING {index.using}" if index.using else ""
                where = f" WHERE {index.where}" if index.where else ""
                statements.append(
                    f"CREATE INDEX IF NOT EXISTS {prefix}{index.name} ON {table}{using}"
                    f" ({index.columns}){where}"
                )
        if self.append_only:
            statements += [
                guard.format(table=table, name=self.name) for guard in dialect.append_only
            ]
        return statements

    def add_column(self, name: str, dialect: Dialect, prefix: str) -> str:
        """The statement adding column ``name`` (nullable, and declared after every column
        an earlier schema had: each column after it nullable too) to the table as that
        schema created it without: an upgrade in place."""
        names = [c.name for c in self.columns]
        at = names.index(name) if name in names else len(names)
        if at == len(names) or not all(c.null for c in self.columns[at:]):
            raise ValueError(
                f"{self.name}.{name} is not a column, or it or a column after it is not nullable"
            )
        column = self.columns[at]
        return f"ALTER TABLE {prefix}{self.name} ADD COLUMN {self._column(column, dialect, False)}"

    def _column(self, column: Column, dialect: Dialect, demoted: bool) -> str:
        if column.type == "serial":
            spelled = dialect.serial + (dialect.autoincrement if column.autoincrement else "")
            if not dialect.serial_is_key:
                spelled += " PRIMARY KEY" if self.key == (column.name,) else " UNIQUE"
            return f"{column.name} {spelled}"
        spelled = _spelled(column.type, dialect)
        if self.key == (column.name,) and not demoted:
            return f"{column.name} {spelled} PRIMARY KEY"
        unique = column.unique or self.key == (column.name,)
        null = "" if column.null else " NOT NULL"
        return f"{column.name} {spelled}{null}{' UNIQUE' if unique else ''}"


def _spelled(kind: ColumnType, dialect: Dialect) -> str:
    """How ``dialect`` spells a column type (not a serial's)."""
    spelled = {"text": "TEXT", "integer": "INTEGER", "real": dialect.double, "bytes": dialect.bytes}
    return spelled[kind]


META: Final = Table(
    "meta", (Column("key", "text"), Column("value", "text")), key=("key",)
)  # a port's schema version under its key (``schema`` in SQLite; ``runtime``, ``door``)


def create_statements(tables: Iterable[Table], dialect: Dialect, prefix: str) -> list[str]:
    """Every statement creating ``tables`` in ``dialect`` with the prefix ``prefix``."""
    return [statement for table in tables for statement in table.create(dialect, prefix)]
