"""A Kestrel SQLite file's WAL checkpoints (``kestrel.db``, ``door.db``), run on a thread
of their own so that no commit pays for one.

The writer asks (:meth:`WalCheckpointer.request`, every so many commits); a daemon thread,
started on the first request, runs ``PRAGMA wal_checkpoint(PASSIVE)`` on its own
connection (a passive checkpoint waits for no reader or writer). SQLite's own
auto-checkpoint stays on, far higher, as the writer's backstop. A passive checkpoint
beside commits that never pause never catches up with them (it copies the frames
written before it began), so the WAL would never start over: given the writer's
``lock``, once the WAL holds ``restart_frames`` frames (SQLite's own count, which the
checkpoint reports), the checkpoint copies the frames written meanwhile with that lock
held (no commit of the writer runs), and the next commit writes the WAL over from its
start. Without a lock (the door's event loop may not wait) the WAL is left to the
backstop. What is durable when is unchanged: a commit is in the WAL when it returns, a
checkpoint only moves it into the file.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from pathlib import Path

__all__ = ["WalCheckpointer"]

log = logging.getLogger(__name__)


class WalCheckpointer:
    """A daemon thread named ``name`` that checkpoints ``path``'s WAL when asked; with
    ``lock``, one more checkpoint with it held once the WAL holds ``restart_frames``."""

    def __init__(
        self,
        path: Path,
        name: str,
        *,
        lock: threading.RLock | None = None,
        restart_frames: int = 0,
    ) -> None:
        self._path = path
        self._name = name
        self._lock = lock
        self._restart_frames = restart_frames
        self._wake = threading.Event()
        self._stopping = False
        self._thread: threading.Thread | None = None
        self.runs = 0
        """Checkpoints the thread has run."""
        self.restarts = 0
        """Checkpoints run with ``lock`` held, each letting the WAL start over."""

    def request(self) -> None:
        """Ask for a checkpoint (requests made while one runs are one)."""
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name=self._name, daemon=True)
            self._thread.start()
        self._wake.set()

    def stop(self) -> None:
        self._stopping = True
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=30)

    def _run(self) -> None:
        conn = sqlite3.connect(self._path, isolation_level=None, timeout=30.0)
        try:
            conn.execute("PRAGMA busy_timeout = 30000")
            while True:
                self._wake.wait()
                self._wake.clear()
                if self._stopping:
                    return
                try:
                    _, frames, _ = conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
                    self.runs += 1
                    if self._lock is not None and frames >= self._restart_frames:
                        with self._lock:  # what the writer wrote meanwhile: none writes now
                            conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
                        self.restarts += 1
                except sqlite3.Error as exc:  # the backstop still checkpoints
                    log.warning("background checkpoint of %s failed: %s", self._path, exc)
        finally:
            conn.close()
