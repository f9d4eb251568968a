"""What differs between the SQL databases the stores use: a :class:`Dialect`.

Both ports (the runtime's and the door's) write each statement once, with ``?``
placeholders, ``{name}`` for a table and ``{for_share}`` / ``{for_update}`` where a row
lock goes; a dialect renders them for its database, with the port's table prefix. Both
databases take the rest as written (``ON CONFLICT ... DO NOTHING`` / ``DO UPDATE SET ... =
excluded...``, joins, ``coalesce``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, fields
from typing import Final, TypeVar

__all__ = ["POSTGRES", "SQLITE", "Dialect", "render_all"]

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Dialect:
    """How one database spells placeholders and row locks."""

    name: str
    placeholder: str  # what a ``?`` becomes
    for_share: str  # a read that a writer must wait for ('' where a write locks the file)
    for_update: str  # a read that locks a row until the transaction ends

    def render(self, statement: str, tables: Iterable[str], prefix: str) -> str:
        """``statement`` in this dialect: each of ``tables`` named ``prefix`` + name,
        locks spelled, placeholders."""
        names = {name: prefix + name for name in tables}
        text = statement.format(**names, for_share=self.for_share, for_update=self.for_update)
        return text.replace("?", self.placeholder)


SQLITE: Final = Dialect("sqlite", "?", "", "")
"""SQLite: one writer at a time (``BEGIN IMMEDIATE`` takes the file), so no row locks."""
POSTGRES: Final = Dialect("postgresql", "%s", " FOR SHARE", " FOR UPDATE")
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
