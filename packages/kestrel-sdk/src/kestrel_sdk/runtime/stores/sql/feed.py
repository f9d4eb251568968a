"""A forward tape's rows over SQL, said once for SQLite and PostgreSQL (a part of
:class:`.store.SqlStore`).

An append is one transaction: it takes its feed's row (``{for_update}``; SQLite's
``BEGIN IMMEDIATE`` takes the file), refuses a frozen feed, and inserts every bar of the
batch, keyed ``(scenario, bar)``: an index another process took first fails the insert,
and nothing of the batch is written (:class:`FeedConflict`). Only then is the caller's
clock read, and the batch stamped with it in one statement, the last before the commit
that makes it visible (``published_at``); once committed, the clock is read again and
written in a transaction of its own (``visible_by``): every bar of the batch became
visible between the two. On PostgreSQL the same
transaction notifies the store's feed channel (:meth:`SqlFeeds._announce`), delivered when
it commits, so that waiting processes wake at once; so does a freeze (a wait for a bar of
a frozen tape is over).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

from kestrel_protocol.sql import Connection, SqlAdapter
from kestrel_protocol.store_feed import FeedBar, FeedConflict, FeedStatus

from .statements import Statements

__all__ = ["SqlFeeds"]


class SqlFeeds(SqlAdapter):
    """The forward-tape methods of the ``RuntimeStore`` port over SQL."""

    sql: ClassVar[Statements]
    duplicate: ClassVar[tuple[type[Exception], ...]]

    def feed_bars(self, scenario_id: str, after: int = 0) -> list[FeedBar]:
        """The scenario's published bars with index >= ``after``, in order."""
        with self._connection() as conn:
            rows = conn.execute(self.sql.feed_bars, (scenario_id, after)).fetchall()
        return [FeedBar(int(r[0]), *(str(value) for value in r[1:6])) for r in rows]

    def append_feed(self, scenario_id: str, bars: list[FeedBar], clock: Callable[[], str]) -> None:
        """Publish ``bars`` (consecutive indexes), all or none, committed before this
        returns, stamped ``clock()`` as the last thing before the commit and again as the
        first thing after it."""
        sql = self.sql
        indexes = [bar.index for bar in bars]
        span = (scenario_id, min(indexes, default=0), max(indexes, default=-1))
        try:
            with self._transaction() as conn:
                conn.execute(sql.open_feed, (scenario_id,))
                state = conn.execute(sql.lock_feed, (scenario_id,)).fetchone()
                if state is not None and int(state[0]):
                    raise FeedConflict(f"the feed of {scenario_id} is frozen")
                for bar in bars:
                    values = (scenario_id, bar.index, bar.time, bar.rows, bar.prefix_root)
                    conn.execute(sql.append_feed, (*values, ""))
                self._announce(conn, scenario_id)  # delivered with the commit
                if bars:
                    conn.execute(sql.stamp_feed, (clock(), *span))
        except self.duplicate:
            raise FeedConflict(f"a bar of {scenario_id} was published meanwhile") from None
        if bars:
            visible_by = clock()  # committed: every reader can see the batch by now
            with self._transaction() as conn:
                conn.execute(sql.confirm_feed, (visible_by, *span))

    def _announce(self, conn: Connection, scenario_id: str) -> None:
        """Tell other processes, with the append's commit, that the scenario's tape grew
        (PostgreSQL: ``NOTIFY``); SQLite's waiters see the file change instead."""

    def feed_state(self, scenario_id: str) -> FeedStatus | None:
        """How far the scenario's feed has grown here; ``None`` when nothing is held."""
        with self._connection() as conn:
            state = conn.execute(self.sql.feed_state, (scenario_id,)).fetchone()
            last = conn.execute(self.sql.last_feed_bar, (scenario_id,)).fetchone()
        if state is None and last is None:
            return None
        frozen, unsealed = (False, False) if state is None else (bool(state[0]), bool(state[1]))
        if last is None:
            return FeedStatus(0, "", "", frozen, unsealed)
        return FeedStatus(int(last[0]) + 1, str(last[1]), str(last[2]), frozen, unsealed)

    def set_feed_state(
        self, scenario_id: str, *, frozen: bool | None = None, unsealed: bool | None = None
    ) -> None:
        """Change the flags given (the others as they were)."""
        flags = (
            None if frozen is None else int(frozen),
            None if unsealed is None else int(unsealed),
        )
        with self._transaction() as conn:
            conn.execute(self.sql.open_feed, (scenario_id,))
            conn.execute(self.sql.lock_feed, (scenario_id,))
            conn.execute(self.sql.set_feed_state, (*flags, scenario_id))
            self._announce(conn, scenario_id)  # a frozen tape ends every wait for a bar
