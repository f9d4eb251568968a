"""The default :class:`~kestrel_protocol.ports.FeedWaiter`: waits, by the wall clock,
for a forward scenario's tape to hold enough bars.

Outside the runtime, which never reads a clock. Over a memory store it waits on the
store's condition (notified by every append in the process); over SQLite or PostgreSQL
(bars may be appended by any process) it polls the store every :data:`POLL_S`.
"""

from __future__ import annotations

import threading
import time
from typing import Final

from kestrel_protocol.store import RuntimeStore

__all__ = ["POLL_S", "StoreFeedWaiter"]

POLL_S: Final = 0.02
"""Seconds between two reads of the store while waiting."""


class StoreFeedWaiter:
    """Waits on ``store`` for a scenario's published bars."""

    def __init__(self, store: RuntimeStore) -> None:
        self._store = store
        published = getattr(store, "published", None)
        self._published = published if isinstance(published, threading.Condition) else None

    def _enough(self, scenario_id: str, bars_needed: int) -> bool:
        state = self._store.feed_state(scenario_id)
        return state is not None and state.bars >= bars_needed

    def wait(self, scenario_id: str, bars_needed: int, seconds: float) -> bool:
        """``True`` once the tape holds ``bars_needed`` bars, ``False`` after ``seconds``."""
        condition = self._published
        if condition is not None:
            with condition:
                return condition.wait_for(lambda: self._enough(scenario_id, bars_needed), seconds)
        deadline = time.monotonic() + seconds
        while not self._enough(scenario_id, bars_needed):
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            time.sleep(min(POLL_S, left))
        return True
