"""The door file's WAL is checkpointed off the caller's thread, and no audit row is lost.

Every call the door serves commits an audit row on its event loop. SQLite's own
auto-checkpoint made the commit that crossed 1,000 pages of WAL (about every 500th row)
copy the log into the file and flush both to the disk, every request in flight waiting
4-18 ms. The serving store now asks its own thread for a passive checkpoint every
``CHECKPOINT_EVERY`` rows; the rows, read back from a fresh connection, are all there.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path

from kestrel_door import AuditLog, DoorStore
from kestrel_door.checkpoints import CHECKPOINT_EVERY


def _append(audit: AuditLog, n: int) -> None:
    for i in range(n):
        audit.append(principal="alice", venue="mcp", tool=f"t{i}", arguments={"n": i}, outcome="ok")


def test_the_store_checkpoints_on_its_own_thread_and_keeps_every_row(tmp_path: Path) -> None:
    store = DoorStore(tmp_path / "door.db")
    audit = AuditLog(store)
    caller = threading.get_ident()
    _append(audit, CHECKPOINT_EVERY + 10)
    deadline = time.monotonic() + 10
    while store.checkpoints.runs < 1:
        assert time.monotonic() < deadline, "no checkpoint ran"
        time.sleep(0.01)
    threads = [t for t in threading.enumerate() if t.name == "kestrel-door-checkpoint"]
    assert [t.ident != caller for t in threads] == [True]
    # the rows the checkpoint moved into the file, and those after it, are all readable
    with sqlite3.connect(tmp_path / "door.db") as other:
        (count,) = other.execute("SELECT count(*) FROM audit").fetchone()
    assert count == CHECKPOINT_EVERY + 10
    store.close()
    assert not threads[0].is_alive()
    again = DoorStore(tmp_path / "door.db")
    rows = AuditLog(again).rows(limit=CHECKPOINT_EVERY + 100)
    assert [r.tool for r in rows] == [f"t{i}" for i in range(CHECKPOINT_EVERY + 10)]
    again.close()


def test_a_store_that_writes_few_rows_starts_no_thread(tmp_path: Path) -> None:
    store = DoorStore(tmp_path / "door.db")  # e.g. the operator's `token issue`
    _append(AuditLog(store), 3)
    store.close()
    assert store.checkpoints.runs == 0
    assert not [t for t in threading.enumerate() if t.name == "kestrel-door-checkpoint"]
