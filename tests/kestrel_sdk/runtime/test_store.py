from __future__ import annotations

import json
import logging
import sqlite3
import threading
import time
from pathlib import Path

import pytest
from kestrel_protocol import KestrelError, canonical_json, root_of
from kestrel_protocol.store import Horizon, JournalConflict, SessionRow
from kestrel_protocol.wal_checkpoints import WalCheckpointer
from kestrel_sdk.runtime.pentads import pentad_bytes, pentad_root
from kestrel_sdk.runtime.stores.sqlite import SqliteStore
from kestrel_sdk.runtime.stores.sqlite.database import RESTART_FRAMES, checkpointer


def test_put_get_is_content_addressed_and_verbatim(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path)
    obj = {"kind": "x", "b": [1, 2, {"z": "é"}], "a": None}
    root = store.put(obj)
    assert root == root_of(obj)
    assert store.get(root) == obj
    assert store.put(obj) == root  # idempotent
    assert store.has(root)
    assert store.get("sha256:" + "0" * 64) is None
    assert not store.has("sha256:" + "0" * 64)


def test_put_refuses_an_object_whose_root_lies(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path)
    with pytest.raises(ValueError, match="claims root"):
        store.put({"kind": "x", "root": "sha256:" + "1" * 64})


def test_database_is_wal_in_home(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "h")
    assert store.path == tmp_path / "h" / "kestrel.db"
    with sqlite3.connect(store.path) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert store.integrity_check() == "ok"


def test_a_corrupted_row_is_reported_and_never_served(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    store = SqliteStore(tmp_path)
    root = store.put({"kind": "x", "value": "100.00"})
    with sqlite3.connect(store.path) as conn:
        conn.execute(
            "UPDATE artifacts SET body = ? WHERE root = ?",
            (canonical_json({"kind": "x", "value": "999.00"}), root),
        )
    with caplog.at_level(logging.ERROR):
        assert store.get(root) is None
    assert store.lookup(root) == (None, "corrupt")
    assert not store.has(root)
    assert any(root in r.getMessage() and "corrupt" in r.getMessage() for r in caplog.records)
    # bytes that are not even JSON are reported the same way
    with sqlite3.connect(store.path) as conn:
        conn.execute("UPDATE artifacts SET body = ? WHERE root = ?", (b"\xff{", root))
    assert store.lookup(root) == (None, "corrupt")
    # putting the true object again repairs the row
    store.put({"kind": "x", "value": "100.00"})
    assert store.get(root) == {"kind": "x", "value": "100.00"}


def test_non_canonical_bytes_are_not_served(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path)
    root = store.put({"a": 1, "b": 2})
    with sqlite3.connect(store.path) as conn:
        conn.execute("UPDATE artifacts SET body = ? WHERE root = ?", (b'{"b":2,"a":1}', root))
    assert store.lookup(root)[1] == "corrupt"


def test_a_journal_row_with_another_source_is_corrupt_not_served(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path)
    row = SessionRow("ks_a", "alice", "acme-trend", "sha256:" + "a" * 64, "1", "open", None, None)
    assert store.insert_session(row)
    opening, first = ("sha256:" + c * 64 for c in "0f")
    proot = pentad_root("ks_a", 1, opening, "advance 1")
    store.append("ks_a", 1, "advance 1", proot, first, prev=opening)
    assert store.lookup(proot)[1] == "ok"
    with sqlite3.connect(store.path) as conn:
        conn.execute("UPDATE journal SET source = 'advance 9' WHERE pentad_root = ?", (proot,))
    assert store.lookup(proot) == (None, "corrupt")
    with sqlite3.connect(store.path) as conn:  # the frame it followed is gone
        conn.execute("UPDATE journal SET source = 'advance 1' WHERE pentad_root = ?", (proot,))
        conn.execute("DELETE FROM journal WHERE pentad_root = ''")
    assert store.lookup(proot) == (None, "corrupt")
    store.close()


def test_pentad_root_is_the_root_of_pentad_bytes() -> None:
    prev = "sha256:" + "a" * 64
    for source in ("advance 1", 'stand down "é \u2028 \x7f"\n\t\x01'):
        root, body = pentad_bytes("ks_x", 3, prev, source)
        assert pentad_root("ks_x", 3, prev, source) == root == root_of(json.loads(body))
        assert canonical_json(json.loads(body)) == body


def test_pentad_root_does_not_depend_on_what_the_process_remembers() -> None:
    """The strings a pentad quotes are remembered once seen (a session id, a short
    source): a root is the same the first time and after, for a source too long to be
    remembered, for a session seen as a source before, and a lone surrogate is refused
    with INVALID_SOURCE every time."""
    prev = "sha256:" + "b" * 64
    long_source = "advance 1\n" * 40
    for session, source in (
        ("ks_new", "buy 7 ACME"),
        ("ks_new", long_source),
        ("buy 7 ACME", "ks_new"),
    ):
        root = pentad_bytes(session, 5, prev, source)[0]
        for _ in range(2):
            assert pentad_root(session, 5, prev, source) == root
    for _ in range(2):
        with pytest.raises(KestrelError) as refused:
            pentad_root("ks_new", 6, prev, "buy 1 \ud800")
        assert refused.value.code == "INVALID_SOURCE"


def test_the_wal_starts_over_under_steps_that_never_pause(tmp_path: Path) -> None:
    """Steps one after another with no pause: the background checkpoints still let the
    WAL start over, so the file holds a fraction of what the steps wrote (a checkpoint
    that never catches up leaves every frame in it, growing to SQLite's backstop)."""
    store = SqliteStore(tmp_path)
    sid = "ks_" + "a" * 26
    scenario_root = "sha256:" + "0" * 64
    store.insert_session(SessionRow(sid, "local", "acme", scenario_root, "l", "open", None, None))
    steps = 5 * RESTART_FRAMES  # never started over, the WAL would hold a frame a step at least
    for seq in range(1, steps + 1):
        frame = f"sha256:{seq:064x}"
        prev = f"sha256:{seq - 1:064x}"  # the frame the step followed (row 0's, at first)
        store.append(sid, seq, "advance 1", f"sha256:{seq + steps:064x}", frame, prev=prev)
    with sqlite3.connect(store.path) as conn:
        page = int(conn.execute("PRAGMA page_size").fetchone()[0])
    frames = (store.path.with_name("kestrel.db-wal").stat().st_size - 32) // (page + 24)
    assert frames < steps // 2, f"{frames} WAL frames after {steps} steps (one a commit at least)"
    assert len(store.journal(sid)) == steps
    store.close()


def test_a_starved_checkpoint_thread_still_bounds_the_wal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The background checkpoint never runs (a thread starved on a busy machine): SQLite's
    auto-checkpoint, the backstop at twice the restart mark, checkpoints in the step, so
    the WAL starts over there instead of growing with every step."""
    store = SqliteStore(tmp_path)
    monkeypatch.setattr(WalCheckpointer, "request", lambda self: None)  # the thread never runs
    sid = "ks_" + "b" * 26
    scenario_root = "sha256:" + "0" * 64
    store.insert_session(SessionRow(sid, "local", "acme", scenario_root, "l", "open", None, None))
    steps = 5 * RESTART_FRAMES
    for seq in range(1, steps + 1):
        prev = f"sha256:{seq - 1:064x}"
        store.append(
            sid, seq, "advance 1", f"sha256:{seq + steps:064x}", f"sha256:{seq:064x}", prev=prev
        )
    with sqlite3.connect(store.path) as conn:
        page = int(conn.execute("PRAGMA page_size").fetchone()[0])
    frames = (store.path.with_name("kestrel.db-wal").stat().st_size - 32) // (page + 24)
    assert frames < 3 * RESTART_FRAMES, f"{frames} WAL frames after {steps} unpaused steps"
    assert len(store.journal(sid)) == steps
    store.close()


def _wal_resets(wal: Path) -> int:
    """The WAL header's checkpoint sequence number: SQLite adds one each time the WAL
    starts over (the file format's bytes 12-15, big-endian)."""
    return int.from_bytes(wal.read_bytes()[12:16], "big")


def test_a_checkpoint_that_runs_late_still_lets_the_wal_start_over(tmp_path: Path) -> None:
    """On a busy machine the checkpoint thread's wakes merge: it runs once where several
    were asked for. That one run, finding the WAL past its mark, lets it start over (a
    decision by a count of runs left it growing to SQLite's backstop)."""
    path = tmp_path / "kestrel.db"
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA wal_autocheckpoint = 0")  # only the thread checkpoints
    conn.execute("CREATE TABLE t (x BLOB)")
    lock = threading.RLock()
    checkpoints = checkpointer(path, lock)
    for _ in range(RESTART_FRAMES):  # a commit writes a frame at least
        with lock:
            conn.execute("INSERT INTO t VALUES (zeroblob(100))")
    wal = tmp_path / "kestrel.db-wal"
    resets = _wal_resets(wal)
    checkpoints.request()  # the one late run of many asked for
    deadline = time.monotonic() + 30
    while _wal_resets(wal) == resets:
        assert time.monotonic() < deadline, "the WAL never started over"
        with lock:
            conn.execute("INSERT INTO t VALUES (zeroblob(100))")
    assert checkpoints.restarts == 1
    checkpoints.stop()
    conn.close()


def test_a_step_leaves_no_reader_behind(tmp_path: Path) -> None:
    """A step's append and horizon read (the store's own cursor) run to their ends: right
    after steps, a refused one included, another process finds no snapshot held and
    empties the WAL (a reader left open would pin it, and the file would grow)."""
    store = SqliteStore(tmp_path)
    sid = "ks_" + "a" * 26
    store.insert_session(
        SessionRow(sid, "local", "acme", "sha256:" + "0" * 64, "l", "open", None, None)
    )
    store.count_session("local", "acme", sid)
    store.raise_horizon("local", "acme", 7, "tape acme read")
    key = ("local", "acme")
    frames = [f"sha256:{seq:064x}" for seq in range(12)]
    assert (
        store.append(sid, 1, "advance 1", "sha256:" + "e" * 64, frames[1], prev=frames[0]) is None
    )
    for seq in range(2, 11):
        found = store.append(
            sid,
            seq,
            "advance 1",
            f"sha256:{seq + 50:064x}",
            frames[seq],
            prev=frames[seq - 1],
            horizon=key,
        )
        assert found == Horizon(7, "tape acme read", 1)
    with pytest.raises(JournalConflict):
        store.append(
            sid, 10, "advance 1", "sha256:" + "f" * 64, frames[11], prev=frames[9], horizon=key
        )
    assert (
        store.append(
            sid,
            11,
            "advance 1",
            "sha256:" + "d" * 64,
            frames[11],
            prev=frames[10],
            horizon=("bob", "acme"),
        )
        is None
    )
    other = sqlite3.connect(store.path, isolation_level=None)
    busy, logged, copied = other.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
    other.close()
    assert (busy, logged, copied) == (0, 0, 0)
    assert store.path.with_name("kestrel.db-wal").stat().st_size == 0
    assert [entry.seq for entry in store.journal(sid)] == list(range(1, 12))
    store.close()


def test_a_second_store_on_the_same_home_sees_committed_rows(tmp_path: Path) -> None:
    first = SqliteStore(tmp_path)
    root = first.put({"k": "v"})
    second = SqliteStore(tmp_path)
    assert second.get(root) == {"k": "v"}
    first.close()
    second.close()


@pytest.mark.parametrize("version", ["0", "6", "12"])
def test_a_store_of_another_schema_is_refused_clearly(tmp_path: Path, version: str) -> None:
    SqliteStore(tmp_path).close()
    with sqlite3.connect(tmp_path / "kestrel.db") as conn:
        conn.execute("UPDATE meta SET value = ? WHERE key = 'schema'", (version,))
    with pytest.raises(KestrelError) as err:
        SqliteStore(tmp_path)
    assert err.value.code == "BACKEND_UNAVAILABLE"
    assert f"schema {version};" in err.value.message
    # it names the steps that resolve it: export proofs, then move the file aside
    db = tmp_path / "kestrel.db"
    assert "kestrel proof SESSION -o FILE" in err.value.message
    assert f"mv {db} {db}.schema-{version}" in err.value.message
    assert "\n" not in err.value.message  # one line, as every CLI prints it
    with sqlite3.connect(tmp_path / "kestrel.db") as conn:  # refused, not rewritten
        assert conn.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone() == (version,)
