"""The default :class:`~kestrel_protocol.ports.FeedWaiter`: waits, by the wall clock,
for a forward scenario's tape to hold enough bars.

Outside the runtime, which never reads a clock. Over a memory store it waits on the
store's condition (notified by every append in the process). Over PostgreSQL or SQLite
(bars may be appended by any process) it sleeps on the process's one watcher of the
store (:mod:`.feed_watchers`: a ``LISTEN`` connection, or a ``data_version`` check),
shared by every waiting request, and reads the store when the watcher says the tape may
have grown; and every :data:`RECHECK_S` besides, so that a notice lost (a connection
dropped) delays a waiter at most that long and never past its deadline. Another store
is read every :data:`POLL_S`.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from functools import partial
from typing import Final

from kestrel_protocol.store import RuntimeStore

from .feed_watchers import FeedWatcher, ListeningWatcher, SqliteWatcher

__all__ = ["POLL_S", "RECHECK_S", "StoreFeedWaiter", "watcher_of"]

POLL_S: Final = 0.02
"""Seconds between two reads of a store that has no watcher."""
RECHECK_S: Final = 1.0
"""Seconds between two reads of a watched store while waiting, whatever the watcher says."""

_WATCHERS: dict[str, FeedWatcher] = {}
_WATCHERS_GUARD = threading.Lock()


def watcher_of(store: RuntimeStore) -> FeedWatcher | None:
    """This process's watcher of ``store`` (one per store location), or ``None`` when
    the store offers none (a waiter then polls it)."""
    listen = getattr(store, "listen_feeds", None)
    channel = getattr(store, "feed_channel", None)
    make: Callable[[], FeedWatcher]
    if callable(listen) and isinstance(channel, str):
        key = f"postgresql {store.location} {channel}"
        make = partial(ListeningWatcher, listen)
    else:
        from ..runtime.stores.sqlite import SqliteStore  # noqa: PLC0415 - only to tell it apart

        if not isinstance(store, SqliteStore):
            return None
        key = f"sqlite {store.path}"
        make = partial(SqliteWatcher, store.path)
    with _WATCHERS_GUARD:
        found = _WATCHERS.get(key)
        if found is None:
            found = _WATCHERS[key] = make()
        return found


class StoreFeedWaiter:
    """Waits on ``store`` for a scenario's published bars (re-reading a watched store at
    least every ``recheck_s``), at most ``longest_s`` whatever a submission asks (a door
    ends every wait before its per-call timeout would answer for it)."""

    def __init__(
        self, store: RuntimeStore, *, recheck_s: float = RECHECK_S, longest_s: float | None = None
    ) -> None:
        self._store = store
        self._longest_s = longest_s
        published = getattr(store, "published", None)
        self._published = published if isinstance(published, threading.Condition) else None
        self._watcher = None if self._published is not None else watcher_of(store)
        self._recheck_s = recheck_s if self._watcher is not None else POLL_S

    def _enough(self, scenario_id: str, bars_needed: int) -> bool:
        """Whether the tape holds ``bars_needed`` bars, or is frozen (it grows no more)."""
        state = self._store.feed_state(scenario_id)
        return state is not None and (state.bars >= bars_needed or state.frozen)

    def wait(self, scenario_id: str, bars_needed: int, seconds: float) -> bool:
        """``True`` once the tape holds ``bars_needed`` bars or is frozen, ``False``
        after ``seconds``."""
        if self._longest_s is not None:
            seconds = min(seconds, self._longest_s)
        condition = self._published
        if condition is not None:
            with condition:
                return condition.wait_for(lambda: self._enough(scenario_id, bars_needed), seconds)
        deadline = time.monotonic() + seconds
        watcher = self._watcher
        if watcher is None:
            while not self._enough(scenario_id, bars_needed):
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                time.sleep(min(self._recheck_s, left))
            return True
        watcher.enter(seconds)
        try:
            signal = watcher.signal
            while True:
                seen = signal.version(scenario_id)  # before the read: no change slips between
                if self._enough(scenario_id, bars_needed):
                    return True
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                signal.wait_past(scenario_id, seen, min(self._recheck_s, left))
        finally:
            watcher.leave()
