"""Opening a Kestrel SQLite file (``kestrel.db``, ``door.db``): private, and in WAL mode
whichever of several processes opening it at once gets there first.

The file is created ``0600`` (its directory ``0700``) before SQLite opens it, so it is
never readable by others, not even for a moment; SQLite gives its ``-wal`` and ``-shm``
files the same mode. Switching to WAL needs the file to itself: SQLite answers a switch
that meets another opener with "database is locked" at once, without waiting out its busy
timeout, so :func:`use_wal` retries until the file is in WAL mode (set once, it stays).
A write that reads first (check, then write) is one :func:`transaction`, which takes the
file's write lock at its start.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

__all__ = ["WAL_SWITCH_TIMEOUT_S", "connect_private", "transaction", "use_wal"]

WAL_SWITCH_TIMEOUT_S = 30.0


def connect_private(path: Path, *, timeout: float = 30.0) -> sqlite3.Connection:
    """An autocommit connection (any thread) to ``path``, created ``0600`` in a ``0700``
    directory when new."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    with contextlib.suppress(FileExistsError):
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    return sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=timeout)


def use_wal(conn: sqlite3.Connection, timeout: float = WAL_SWITCH_TIMEOUT_S) -> None:
    """Put ``conn``'s file in WAL mode, retrying while other openers hold it."""
    deadline = time.monotonic() + timeout
    pause = 0.001
    while True:
        try:
            mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()
            if mode is not None and str(mode[0]).lower() == "wal":
                return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) and "busy" not in str(exc):
                raise
        if time.monotonic() >= deadline:
            raise sqlite3.OperationalError(
                f"could not switch the database to WAL mode in {timeout:.0f} s: it is locked"
            )
        time.sleep(pause)
        pause = min(pause * 2, 0.05)


@contextlib.contextmanager
def transaction(
    conn: sqlite3.Connection, lock: AbstractContextManager[Any]
) -> Iterator[sqlite3.Connection]:
    """One ``BEGIN IMMEDIATE`` transaction on the autocommit ``conn`` (``lock``, which
    guards ``conn`` in this process, held): committed when the block ends, rolled back
    when it raises."""
    with lock:
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield conn
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")
