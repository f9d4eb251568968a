"""The proofs an operator made public on the door's board, in the door's store.

One table, ``board_proofs`` (``kestrel_door_board_proofs`` in PostgreSQL): a proof's
root, the agent it is published under (or none: the board credits the principal the
door's statement names) and the proof itself (its canonical JSON, the door's signed
statement included). The operator's ``kestrel-door board publish|unpublish`` writes it;
every replica serving ``/board`` reads it (:mod:`.board_page`). Its statements are said
once for SQLite and PostgreSQL, as :mod:`.records`' are.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from kestrel_protocol.sql import Dialect, SqlAdapter, render_all

from .tables import BOARD_TABLES

__all__ = [
    "BoardStatements",
    "PublishedProof",
    "SqlBoardRecords",
]


@dataclass(frozen=True, slots=True)
class PublishedProof:
    """A proof on the board: its root, the agent it is published under, its JSON text."""

    root: str
    agent: str | None
    proof: str


@dataclass(frozen=True, slots=True)
class BoardStatements:
    """The board's statements, rendered by :meth:`of` for one dialect."""

    publish: str = (
        "INSERT INTO {board_proofs} (root, agent, proof) VALUES (?, ?, ?)"
        " ON CONFLICT (root) DO UPDATE SET agent = excluded.agent, proof = excluded.proof"
    )
    unpublish: str = "DELETE FROM {board_proofs} WHERE root = ?"
    published: str = "SELECT root, agent, proof FROM {board_proofs} ORDER BY root"
    fingerprint: str = "SELECT root, agent FROM {board_proofs} ORDER BY root"

    @classmethod
    def of(cls, dialect: Dialect, prefix: str) -> BoardStatements:
        return render_all(cls(), dialect, (t.name for t in BOARD_TABLES), prefix)


class SqlBoardRecords(SqlAdapter):
    """The published proofs over SQL; the door's store adapters mix it in."""

    board_sql: ClassVar[BoardStatements]

    def publish(self, root: str, agent: str | None, proof: str) -> None:
        """Publish (or re-publish under another agent) the proof of ``root``."""
        with self._connection() as conn:
            conn.execute(self.board_sql.publish, (root, agent, proof))

    def unpublish(self, root: str) -> bool:
        """Take the proof of ``root`` off the board; whether it was on it."""
        with self._connection() as conn:
            return int(conn.execute(self.board_sql.unpublish, (root,)).rowcount) > 0

    def published(self) -> list[PublishedProof]:
        """Every published proof, in the order of roots."""
        with self._connection() as conn:
            rows = conn.execute(self.board_sql.published).fetchall()
        return [PublishedProof(str(r), a if a is None else str(a), str(p)) for r, a, p in rows]

    def board_version(self) -> tuple[tuple[str, str | None], ...]:
        """What the board is built from, short of the proofs (cheap to read on every
        request): the roots and agents, in order."""
        with self._connection() as conn:
            rows = conn.execute(self.board_sql.fingerprint).fetchall()
        return tuple((str(r), a if a is None else str(a)) for r, a in rows)
