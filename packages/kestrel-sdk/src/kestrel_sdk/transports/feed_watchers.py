"""Process-wide watchers of a store's forward tapes: one per store and process, however
many requests wait on it, each waking its waiters through one :class:`FeedSignal`.

- PostgreSQL: one connection ``LISTEN``\\ s on the store's feed channel
  (``kestrel_sdk.runtime.stores.postgres_notices``; every append notifies it when it commits)
  and fans each notice out to the waiters of its scenario. A dropped connection is
  reconnected (after :data:`RETRY_S`) and every waiter told to re-read the store, since
  notices sent meanwhile are lost.
- SQLite: one dedicated read connection checks ``PRAGMA data_version`` (which changes
  when any other connection, in any process, commits to the file) every
  :data:`SQLITE_POLL_S`, and wakes every waiter when it changes.

A watcher starts with its first waiter and stops :data:`LINGER_S` after its last one
leaves, so an idle process holds no connection.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Final, Protocol

__all__ = [
    "LINGER_S",
    "RETRY_MAX_S",
    "RETRY_S",
    "SQLITE_POLL_S",
    "FeedNotices",
    "FeedSignal",
    "FeedWatcher",
    "ListeningWatcher",
    "SqliteWatcher",
]

logger = logging.getLogger(__name__)

SQLITE_POLL_S: Final = 0.002
"""Seconds between two checks of an SQLite file's ``data_version`` while anyone waits."""
RETRY_S: Final = 0.2
"""Seconds before a dropped listener connection is opened again (doubled after each
failure in a row, up to :data:`RETRY_MAX_S`, so an outage is not retried, and logged,
five times a second; waiters meanwhile re-read the store themselves)."""
RETRY_MAX_S: Final = 5.0
LINGER_S: Final = 30.0
"""Seconds a watcher outlives its last waiter (so a next ``wait`` finds it listening)."""
_READY_S: Final = 5.0  # at most this long a first waiter waits for the watcher to start


class FeedSignal:
    """Counts the changes a watcher saw, per scenario (``None``: any scenario may have
    changed); waiters sleep on :attr:`condition` until their count moves."""

    def __init__(self) -> None:
        self.condition = threading.Condition()
        self._any = 0
        self._each: dict[str, int] = {}

    def version(self, scenario_id: str) -> int:
        """The changes seen so far that may concern ``scenario_id``."""
        with self.condition:
            return self._any + self._each.get(scenario_id, 0)

    def changed(self, scenario_id: str | None) -> None:
        """Note a change (of ``scenario_id``, or of anything) and wake the waiters."""
        with self.condition:
            if scenario_id is None:
                self._any += 1
            else:
                self._each[scenario_id] = self._each.get(scenario_id, 0) + 1
            self.condition.notify_all()

    def wait_past(self, scenario_id: str, seen: int, seconds: float) -> None:
        """Return once :meth:`version` of ``scenario_id`` is past ``seen``, or after
        ``seconds``."""
        with self.condition:
            self.condition.wait_for(lambda: self.version(scenario_id) != seen, seconds)


class FeedWatcher:
    """Runs :meth:`_watch` on a thread while anyone waits (and :data:`LINGER_S` after)."""

    def __init__(self) -> None:
        self.signal = FeedSignal()
        self._guard = threading.Lock()
        self._waiters = 0
        self._left_at = time.monotonic()
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()

    def enter(self, seconds: float) -> None:
        """A waiter begins: start the watcher if it is not running, and wait until it
        watches (at most ``seconds``), so that no change after this returns goes unseen."""
        with self._guard:
            self._waiters += 1
            if self._thread is None:
                self._ready.clear()
                self._thread = threading.Thread(
                    target=self._run, name=f"kestrel-{type(self).__name__}", daemon=True
                )
                self._thread.start()
        self._ready.wait(min(seconds, _READY_S))

    def leave(self) -> None:
        """A waiter is done."""
        with self._guard:
            self._waiters -= 1
            self._left_at = time.monotonic()

    def idle(self) -> bool:
        """Whether the watcher may stop: nobody has waited for :data:`LINGER_S`."""
        with self._guard:
            return self._waiters == 0 and time.monotonic() - self._left_at > LINGER_S

    def _run(self) -> None:
        failures = 0
        while True:
            try:
                self._watch()
                failures = 0
            except Exception:  # a watcher outlives its store's outages
                if not failures:
                    logger.warning("feed watcher %s failed; retrying", type(self).__name__)
                logger.debug("feed watcher failure", exc_info=True)
                self._ready.set()  # waiters fall back to re-reading the store
                time.sleep(min(RETRY_S * 2**failures, RETRY_MAX_S))
                failures += 1
            self.signal.changed(None)  # whatever was missed: every waiter re-reads
            with self._guard:
                if self._waiters == 0 and time.monotonic() - self._left_at > LINGER_S:
                    self._thread = None
                    return

    def _watch(self) -> None:
        """Watch until :meth:`idle` (calling :meth:`_watching` once watching)."""
        raise NotImplementedError

    def _watching(self) -> None:
        self.signal.changed(None)  # (re)connected: what changed before, re-read
        self._ready.set()


class FeedNotices(Protocol):
    """A connection listening for a store's appends (``PostgresStore.listen_feeds``)."""

    def next(self, timeout: float) -> list[str]: ...

    def close(self) -> None: ...


class ListeningWatcher(FeedWatcher):
    """One listening connection per process and store (PostgreSQL)."""

    def __init__(self, listen: Callable[[], FeedNotices]) -> None:
        super().__init__()
        self._listen = listen

    def _watch(self) -> None:
        notices = self._listen()
        try:
            self._watching()
            while not self.idle():
                for scenario_id in notices.next(timeout=1.0):
                    self.signal.changed(scenario_id)
        finally:
            notices.close()


class SqliteWatcher(FeedWatcher):
    """One read connection per process and file, checking ``PRAGMA data_version``."""

    def __init__(self, path: Path) -> None:
        super().__init__()
        self._path = path

    def _watch(self) -> None:
        conn = sqlite3.connect(f"{self._path.as_uri()}?mode=ro", uri=True)
        try:
            version = conn.execute("PRAGMA data_version").fetchone()
            self._watching()
            while not self.idle():
                time.sleep(SQLITE_POLL_S)
                now = conn.execute("PRAGMA data_version").fetchone()
                if now != version:
                    version = now
                    self.signal.changed(None)
        finally:
            conn.close()
