"""A forward tape's appends, announced on PostgreSQL: the channel an append notifies and
the connection a process listens on.

Every append (:meth:`.sql.SqlFeeds.append_feed`, whichever face made it) runs
``pg_notify(channel, scenario_id)`` in its transaction, so the notice is delivered when,
and only if, the bars are committed. The channel is the store's: one per schema of a
database (:func:`feed_channel`), so stores sharing a database do not wake each other.
What a process does with the notices (one listener fanning out to its waiters) is the
waiter's (``kestrel_sdk.transports.feed_waiter``): nothing here reads a clock.
"""

from __future__ import annotations

import hashlib
from typing import Any, Final

import psycopg
from kestrel_protocol.outage import store_unavailable
from psycopg import sql

__all__ = ["CHANNEL_PREFIX", "FeedNotices", "feed_channel"]

CHANNEL_PREFIX: Final = "kestrel_feed_"
"""The start of every store's feed channel."""


def feed_channel(schema: str) -> str:
    """The feed channel of the store whose tables are in ``schema`` (a short, fixed
    identifier: a schema's name may be longer than a channel's may be)."""
    return CHANNEL_PREFIX + hashlib.sha256(schema.encode()).hexdigest()[:20]


class FeedNotices:
    """One connection listening on a store's feed channel.

    An outage (the server gone, the connection terminated) is ``BACKEND_UNAVAILABLE``
    from :meth:`__init__` or :meth:`next`; the caller reconnects with a new instance
    (notices sent meanwhile are lost: re-read the store after reconnecting).
    """

    def __init__(self, dsn: str, channel: str) -> None:
        self._dsn = dsn
        try:
            self._conn: psycopg.Connection[Any] = psycopg.connect(
                dsn, autocommit=True, connect_timeout=10
            )
            self._conn.execute(sql.SQL("LISTEN {}").format(sql.Identifier(channel)))
        except psycopg.Error as exc:
            raise store_unavailable(dsn, exc) from None

    def next(self, timeout: float) -> list[str]:
        """The scenarios announced, as soon as one is (then any others already
        received); empty after ``timeout`` seconds without one."""
        try:
            got = [n.payload for n in self._conn.notifies(timeout=timeout, stop_after=1)]
            got += [n.payload for n in self._conn.notifies(timeout=0)]
        except psycopg.Error as exc:
            raise store_unavailable(self._dsn, exc) from None
        return got

    def close(self) -> None:
        """Stop listening (idempotent)."""
        self._conn.close()
