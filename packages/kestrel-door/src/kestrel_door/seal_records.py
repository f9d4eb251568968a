"""The scenarios a door seals by ``--seal``, kept in the door's store.

One table, ``seals`` (``kestrel_door_seals`` in PostgreSQL): a sealed scenario's id and
the id it is served under (or none: its own). ``kestrel-door serve --seal ID[=SERVED_ID]``
writes each, once checked against the catalog; every ``serve`` on the store reads them at
start and seals them besides its own ``--seal`` (:mod:`.sealing`), so a replica started
without ``--seal`` serves no sealed tape; ``kestrel-door unseal ID`` removes one (a door
serves its tape once restarted). Its statements are said once for SQLite and PostgreSQL,
as :mod:`.records`' are.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import ClassVar

from kestrel_protocol.sql import Dialect, SqlAdapter, render_all

from .tables import SEAL_TABLES

__all__ = ["SealStatements", "SqlSealRecords"]


@dataclass(frozen=True, slots=True)
class SealStatements:
    """The seals' statements, rendered by :meth:`of` for one dialect."""

    keep: str = (
        "INSERT INTO {seals} (scenario, served) VALUES (?, ?)"
        " ON CONFLICT (scenario) DO UPDATE SET served = excluded.served"
    )
    remove: str = "DELETE FROM {seals} WHERE scenario = ? OR served = ?"
    kept: str = "SELECT scenario, served FROM {seals} ORDER BY scenario"

    @classmethod
    def of(cls, dialect: Dialect, prefix: str) -> SealStatements:
        return render_all(cls(), dialect, (t.name for t in SEAL_TABLES), prefix)


class SqlSealRecords(SqlAdapter):
    """The kept seals over SQL; the door's store adapters mix it in."""

    seal_sql: ClassVar[SealStatements]

    def keep_seals(self, specs: Iterable[tuple[str, str | None]]) -> None:
        """Keep each ``(scenario, served id or None)`` (a scenario kept before: as now)."""
        with self._transaction() as conn:
            for scenario, served in specs:
                conn.execute(self.seal_sql.keep, (scenario, served))

    def remove_seal(self, scenario: str) -> bool:
        """Remove the seal of ``scenario`` (its id, or the id it is served under); whether
        the store kept one."""
        with self._connection() as conn:
            return int(conn.execute(self.seal_sql.remove, (scenario, scenario)).rowcount) > 0

    def kept_seals(self) -> list[tuple[str, str | None]]:
        """Every kept seal as ``(scenario, served id or None)``, in the order of ids."""
        with self._connection() as conn:
            rows = conn.execute(self.seal_sql.kept).fetchall()
        return [(str(s), None if v is None else str(v)) for s, v in rows]
