"""The SQLite store's step files: one line per accepted step, folded into the journal
table on close, on open and on a lookup that misses; torn and corrupt lines."""

from __future__ import annotations

import errno
import logging
import mmap
import os
import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from kestrel_protocol import KestrelError
from kestrel_protocol.store import JournalConflict, SessionHead, SessionRow
from kestrel_sdk.runtime.service import Runtime
from kestrel_sdk.runtime.sqlite import SqliteStore

SOURCES = ["buy 2 ACME\nadvance 1", "advance 1", "sell 1 ACME\nadvance 2", "advance 1"] * 3


def _steps(home: Path) -> list[Path]:
    return sorted((home / "kestrel.db.steps").iterdir())


def _lines(path: Path) -> bytes:
    """What a step file holds: its lines, without the NUL bytes it is padded with."""
    data = path.read_bytes()
    return data[: len(data.rstrip(b"\0"))]


def _tear(path: Path, data: bytes) -> None:
    """Write ``data`` where the next line goes, as a copy cut short by a kill leaves it."""
    with path.open("r+b") as file:
        file.seek(len(_lines(path)))
        file.write(data)


def _table_seqs(home: Path) -> list[int]:
    with sqlite3.connect(home / "kestrel.db") as conn:
        keys = [int(k) for (k,) in conn.execute("SELECT key FROM journal ORDER BY key")]
    conn.close()
    return [k & 0xFFFFFFFF for k in keys]


def _run(home: Path, sources: list[str]) -> tuple[Runtime, str, list[str]]:
    rt = Runtime(home)
    sid = rt.open_session("local", "acme-trend", "s").session_id
    assert sid is not None
    roots = [rt.submit("local", sid, source).delivery.frame_root for source in sources]
    return rt, sid, roots


def _abandon(rt: Runtime) -> None:
    """What a killed process leaves: nothing folded, no file closed cleanly."""
    store = rt.store
    assert isinstance(store, SqliteStore)
    store._closed = True  # close() now only releases handles, as a kill would
    rt.shutdown()


def test_steps_after_the_first_are_lines_until_the_session_closes(tmp_path: Path) -> None:
    rt, sid, _ = _run(tmp_path, SOURCES)
    (path,) = _steps(tmp_path)
    assert len(_lines(path).splitlines()) == len(SOURCES) - 1  # seq 1 is a table row
    assert _table_seqs(tmp_path) == [0, 1]
    journal = rt.store.journal(sid)
    assert [e.seq for e in journal] == list(range(1, len(SOURCES) + 1))
    record = rt.close("local", sid)
    assert not path.exists()
    assert _table_seqs(tmp_path) == list(range(len(SOURCES) + 1))
    assert rt.store.journal(sid) == journal
    assert record.pentads == [e.pentad_root for e in journal]
    rt.shutdown()


def test_a_killed_process_steps_are_folded_and_resumed(tmp_path: Path) -> None:
    rt, sid, roots = _run(tmp_path, SOURCES)
    _abandon(rt)
    assert _steps(tmp_path)  # left unfolded
    again = Runtime(tmp_path)  # folds on open
    assert _table_seqs(tmp_path) == list(range(len(SOURCES) + 1))
    assert again.frame("local", sid).frame_root == roots[-1]
    reference, ref_sid, expected = _run(tmp_path / "ref", [*SOURCES, "advance 2"])
    assert ref_sid == sid
    assert again.submit("local", sid, "advance 2").delivery.frame_root == expected[-1]
    again.shutdown()
    reference.shutdown()


def _status(home: Path, sid: str) -> str:
    with sqlite3.connect(home / "kestrel.db") as conn:
        (status,) = conn.execute("SELECT status FROM sessions WHERE id = ?", (sid,)).fetchone()
    conn.close()
    return str(status)


def test_a_stand_down_is_one_more_line_and_folds_nothing(tmp_path: Path) -> None:
    """The step that stands a session down once folded every line before it into the
    table in its own transaction: on a long session, that one step took most of a
    second. It is a line carrying the status now; the table gets only the status."""
    rt, sid, _ = _run(tmp_path, [*SOURCES, "stand down"])
    (path,) = _steps(tmp_path)
    lines = _lines(path).splitlines()
    assert len(lines) == len(SOURCES)  # seq 2 .. the stand-down
    assert lines[-1].endswith(b'"stand down" stood-down')
    assert _table_seqs(tmp_path) == [0, 1]
    assert _status(tmp_path, sid) == "stood-down"
    store = rt.store
    assert store.head(sid) == SessionHead(len(SOURCES) + 1, "stood-down")
    assert [r.id for r in store.sessions("stood-down")] == [sid]
    with pytest.raises(KestrelError) as refused:
        rt.submit("local", sid, "advance 1")
    assert refused.value.code == "SESSION_STOOD_DOWN"
    rt.close("local", sid)
    assert not path.exists()
    assert _table_seqs(tmp_path) == list(range(len(SOURCES) + 2))
    assert _status(tmp_path, sid) == "closed"  # the fold did not take it back to stood-down
    rt.shutdown()


def test_a_stand_down_killed_before_its_status_is_stored_keeps_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Killed after the stand-down's line and before the sessions table took its status:
    the line has it, so the store reports it and the next open stores it."""
    from kestrel_sdk.runtime.sqlite import store as store_module

    monkeypatch.setattr(store_module, "set_status", lambda *args: None)  # the kill
    rt, sid, roots = _run(tmp_path, [*SOURCES, "stand down"])
    assert _status(tmp_path, sid) == "open"
    assert rt.store.head(sid) == SessionHead(len(SOURCES) + 1, "stood-down")
    _abandon(rt)
    monkeypatch.undo()
    again = Runtime(tmp_path)  # folds on open, status and all
    assert _table_seqs(tmp_path) == list(range(len(SOURCES) + 2))
    assert _status(tmp_path, sid) == "stood-down"
    delivery = again.frame("local", sid)
    assert (delivery.frame.status, delivery.frame_root) == ("stood-down", roots[-1])
    again.shutdown()


@pytest.mark.parametrize(
    ("tail", "what"),
    [
        (b" stood-by", "line 11 is not a step line"),  # not a status
        (b' stood-down\n13 sha256:0 sha256:1 "advance 1"', "line 12 follows the status change"),
    ],
)
def test_a_line_after_or_with_a_bad_status_refuses_to_resume(
    tmp_path: Path, tail: bytes, what: str
) -> None:
    rt, sid, _ = _run(tmp_path, SOURCES)
    _abandon(rt)
    (path,) = _steps(tmp_path)
    path.write_bytes(_lines(path)[:-1] + tail + b"\n")
    again = Runtime(tmp_path)
    with pytest.raises(KestrelError) as refused:
        again.frame("local", sid)
    assert refused.value.code == "BACKEND_UNAVAILABLE"
    assert what in refused.value.message
    assert path.exists()  # nothing lost: left for an operator
    again.shutdown()


def test_a_torn_last_line_is_dropped(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    rt, sid, roots = _run(tmp_path, SOURCES)
    _abandon(rt)
    (path,) = _steps(tmp_path)
    _tear(path, b'13 sha256:00 sha256:11 "adv')  # never acknowledged
    with caplog.at_level(logging.WARNING):
        again = Runtime(tmp_path)
    assert "torn last line" in caplog.text
    assert again.frame("local", sid).frame.seq == len(SOURCES)
    assert again.frame("local", sid).frame_root == roots[-1]
    assert again.submit("local", sid, "advance 1").pentad.seq == len(SOURCES) + 1
    again.shutdown()


def test_a_torn_line_is_cut_before_the_next_append(tmp_path: Path) -> None:
    """Another store on the file appends after a torn line without folding first."""
    rt, sid, roots = _run(tmp_path, SOURCES[:4])
    store = rt.store
    assert isinstance(store, SqliteStore)
    (path,) = _steps(tmp_path)
    _tear(path, b"5 sha256:")
    response = rt.submit("local", sid, "advance 1")  # the file changed: the slow path
    assert response.pentad.seq == 5
    assert response.pentad.prev == roots[-1]
    assert [e.seq for e in store.journal(sid)] == [1, 2, 3, 4, 5]
    assert _lines(path).endswith(b'"advance 1"\n')
    rt.shutdown()


def test_a_torn_line_missing_bytes_inside_is_dropped(tmp_path: Path) -> None:
    """A copy cut short may have stored the line's end but not its middle: the bytes
    from the last complete line to the last one written are the torn line."""
    rt, sid, roots = _run(tmp_path, SOURCES)
    _abandon(rt)
    (path,) = _steps(tmp_path)
    _tear(path, b"1" + b"\0" * 80 + b'"advance 1"\n')
    again = Runtime(tmp_path)
    assert again.frame("local", sid).frame_root == roots[-1]
    assert again.submit("local", sid, "advance 1").pentad.seq == len(SOURCES) + 1
    again.shutdown()
    assert _table_seqs(tmp_path) == list(range(len(SOURCES) + 2))


def test_a_nul_byte_inside_a_line_refuses_to_resume(tmp_path: Path) -> None:
    """Only a torn last line may hold NUL bytes: one in an earlier line is corruption,
    not the end of the file (the lines after it are not dropped as torn)."""
    rt, sid, _ = _run(tmp_path, SOURCES)
    _abandon(rt)
    (path,) = _steps(tmp_path)
    lines = _lines(path).splitlines(keepends=True)
    lines[3] = lines[3][:20] + b"\0" + lines[3][21:]
    path.write_bytes(b"".join(lines))
    again = Runtime(tmp_path)
    with pytest.raises(KestrelError) as refused:
        again.frame("local", sid)
    assert refused.value.code == "BACKEND_UNAVAILABLE"
    assert "line 4 holds a NUL byte" in refused.value.message
    assert _lines(path) == b"".join(lines)  # nothing lost: left for an operator
    again.shutdown()


def test_a_step_file_grows_past_its_first_length_with_two_stores(tmp_path: Path) -> None:
    """A step file is made 64 KiB long and grows when a line does not fit (about 380
    lines in), by whichever store appends then; the other maps it again when it finds
    the line there."""
    sources = [SOURCES[i % len(SOURCES)] for i in range(1000)]
    one = Runtime(tmp_path)
    sid = one.open_session("local", "acme-trend", "s").session_id
    assert sid is not None
    two = Runtime(tmp_path)  # opened before any line: it folds nothing
    seqs = [one.submit("local", sid, source).pentad.seq for source in sources[:500]]
    (path,) = _steps(tmp_path)
    grown_once = path.stat().st_size
    assert 65536 < len(_lines(path)) <= grown_once == 2 * 65536
    seqs += [two.submit("local", sid, source).pentad.seq for source in sources[500:502]]
    seqs += [one.submit("local", sid, source).pentad.seq for source in sources[502:]]
    assert seqs == list(range(1, 1001))
    assert len(_lines(path).splitlines()) == 999  # seq 1 is a table row
    assert path.stat().st_size == 4 * 65536  # grown again, by its length
    reference, _, expected = _run(tmp_path / "ref", sources)
    assert [e.frame_root for e in two.store.journal(sid)] == expected
    three = Runtime(tmp_path)  # a fresh process replays what both appended
    assert three.frame("local", sid).frame_root == expected[-1]
    for rt in (one, two, three, reference):
        rt.shutdown()


def test_a_file_system_without_shared_mappings_takes_each_line_by_pwrite(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Some file systems refuse a shared writable mapping (``ENODEV``): the store says
    so once and writes every line with ``pwrite``, with the same check (a NUL where the
    line goes), so two stores still take turns and a fresh one replays the same roots."""
    reference, _, expected = _run(tmp_path / "ref", SOURCES)
    reference.shutdown()

    def refuse(*args: object, **kwargs: object) -> mmap.mmap:
        raise OSError(errno.ENODEV, "No such device")

    monkeypatch.setattr(mmap, "mmap", refuse)
    with caplog.at_level(logging.WARNING):
        one = Runtime(tmp_path)
        sid = one.open_session("local", "acme-trend", "s").session_id
        assert sid is not None
        two = Runtime(tmp_path)  # opened before any line: it folds nothing
        for i, source in enumerate(SOURCES):
            (one if i % 3 else two).submit("local", sid, source)
    assert caplog.text.count("cannot be mapped") == 1
    assert [e.frame_root for e in one.store.journal(sid)] == expected
    (path,) = _steps(tmp_path)
    assert len(_lines(path).splitlines()) == len(SOURCES) - 1
    one.shutdown()
    two.shutdown()
    monkeypatch.undo()
    three = Runtime(tmp_path)  # mapped again: a fresh process replays what both wrote
    assert three.frame("local", sid).frame_root == expected[-1]
    three.shutdown()


def test_a_corrupt_line_refuses_to_resume(tmp_path: Path) -> None:
    rt, sid, _ = _run(tmp_path, SOURCES)
    _abandon(rt)
    (path,) = _steps(tmp_path)
    lines = _lines(path).splitlines(keepends=True)
    lines[3] = b"not a step\n"
    path.write_bytes(b"".join(lines))
    again = Runtime(tmp_path)  # opens: the other sessions are served
    with pytest.raises(KestrelError) as refused:
        again.frame("local", sid)
    assert refused.value.code == "BACKEND_UNAVAILABLE"
    assert "line 4 is not a step line" in refused.value.message
    assert path.exists()  # nothing lost: left for an operator
    again.shutdown()


def test_another_database_at_the_same_path_never_adopts_its_steps(tmp_path: Path) -> None:
    rt, sid, _ = _run(tmp_path, SOURCES)
    _abandon(rt)
    (tmp_path / "kestrel.db").rename(tmp_path / "moved.db")
    for suffix in ("-wal", "-shm"):
        (tmp_path / f"kestrel.db{suffix}").unlink(missing_ok=True)
    fresh, fresh_sid, roots = _run(tmp_path, ["advance 1", "advance 1"])
    assert fresh_sid == sid  # the same deterministic id, a new database
    assert fresh.store.journal(sid)[-1].seq == 2
    assert fresh.frame("local", sid).frame_root == roots[-1]
    fresh.shutdown()


def test_two_stores_take_turns_on_one_session(tmp_path: Path) -> None:
    one, sid, _ = _run(tmp_path, SOURCES[:2])
    two = Runtime(tmp_path)
    seqs = []
    for i, source in enumerate(SOURCES[2:]):
        rt = one if i % 3 else two  # each turn may find the other's lines
        seqs.append(rt.submit("local", sid, source).pentad.seq)
    assert seqs == list(range(3, len(SOURCES) + 1))
    reference, _, expected = _run(tmp_path / "ref", SOURCES)
    assert [e.frame_root for e in one.store.journal(sid)] == expected
    assert one.store.journal(sid) == two.store.journal(sid)
    three = Runtime(tmp_path)  # a fresh process replays what both appended
    assert three.frame("local", sid).frame_root == expected[-1]
    three.shutdown()
    one.close("local", sid)  # one catches up first: its engine was a step behind
    with pytest.raises(KestrelError) as closed:
        two.submit("local", sid, "advance 1")
    assert closed.value.code == "SESSION_CLOSED"
    for rt in (one, two, reference):
        rt.shutdown()


def test_full_synchronous_flushes_every_step_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KESTREL_SQLITE_SYNCHRONOUS", "FULL")
    flushed: list[int] = []
    real = os.fdatasync

    def fdatasync(fd: int) -> None:
        flushed.append(fd)
        real(fd)

    monkeypatch.setattr(os, "fdatasync", fdatasync)
    rt, sid, _ = _run(tmp_path, SOURCES)
    assert len(flushed) == len(SOURCES) - 1  # every line; seq 1 is a synchronous commit
    assert [e.seq for e in rt.store.journal(sid)] == list(range(1, len(SOURCES) + 1))
    rt.shutdown()


OPENING, FIRST, SECOND = ("sha256:" + c * 64 for c in "abc")


def _race(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, act: Callable[[SqliteStore], None]
) -> tuple[list[str], SqliteStore]:
    """Two stores on one database, a session at seq 1 and no step file. ``act`` runs on
    the first store; while its transaction is open, the second appends seq 2 as a step
    line in a thread. Returns what became of that append and the second store.

    The thread signals when it reads the journal table. Without the step file's lock
    held through the transaction it gets that far at once, reads seq 1 and appends;
    with the lock it waits, and the transaction commits after at most half a second."""
    from kestrel_sdk.runtime.pentads import pentad_root
    from kestrel_sdk.runtime.sqlite import journal as journal_module
    from kestrel_sdk.runtime.sqlite import store as store_module

    one, two = SqliteStore(tmp_path), SqliteStore(tmp_path)
    row = SessionRow(
        "ks_race", "alice", "acme-trend", "sha256:" + "5" * 64, "1", "open", None, None
    )
    assert one.insert_session(row)
    root = pentad_root("ks_race", 1, OPENING, "advance 1")
    one.append("ks_race", 1, "advance 1", root, FIRST, prev=OPENING)
    two.journal("ks_race")  # two knows the session (its key), not a step file: none exists
    read_the_table = threading.Event()
    real_table_last = journal_module.table_last

    def noted_table_last(conn: sqlite3.Connection, base: int) -> int:
        if threading.current_thread() is not threading.main_thread():
            read_the_table.set()
        return real_table_last(conn, base)

    outcome: list[str] = []

    def two_appends_seq_2() -> None:
        root = pentad_root("ks_race", 2, FIRST, "advance 1")
        try:
            two.append("ks_race", 2, "advance 1", root, SECOND, prev=FIRST)
            outcome.append("appended")
        except JournalConflict:
            outcome.append("conflict")

    real_transaction = one._transaction
    racer = threading.Thread(target=two_appends_seq_2)

    @contextmanager
    def transaction_racing_two() -> Iterator[sqlite3.Connection]:
        with real_transaction() as conn:
            if racer.ident is None:  # act's transaction, not a later fold
                racer.start()
                read_the_table.wait(timeout=0.5)  # at once only without the lock
            yield conn

    monkeypatch.setattr(store_module, "table_last", noted_table_last)
    monkeypatch.setattr(one, "_transaction", transaction_racing_two)
    act(one)
    racer.join(timeout=30)
    monkeypatch.undo()
    one.close()
    return outcome, two


def test_a_status_change_and_another_stores_line_for_the_same_seq_never_both_land(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With no step file, a status change (then a table row) and another store's step
    line once raced: both were acknowledged as seq 2. A status change is a line now,
    appended under the step file's lock before the sessions table takes its status,
    so the other store finds it there and is refused."""
    from kestrel_sdk.runtime.pentads import pentad_root

    stood = pentad_root("ks_race", 2, FIRST, "stand down")
    outcome, two = _race(
        tmp_path,
        monkeypatch,
        lambda one: one.append(
            "ks_race", 2, "stand down", stood, SECOND, prev=FIRST, status="stood-down"
        ),
    )
    assert outcome == ["conflict"]
    assert [(e.seq, e.source) for e in two.journal("ks_race")] == [
        (1, "advance 1"),
        (2, "stand down"),
    ]
    two.close()


def test_a_close_and_another_stores_next_step_never_both_land(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A close is one transaction in the table. With no step file, another store once
    read the session as open during it and appended the next step as a line:
    acknowledged, then lost with the closed session's file. The close now holds the
    step file's lock through its transaction, so the other store reads the session
    closed and is refused."""
    record = "sha256:" + "9" * 64
    outcome, two = _race(
        tmp_path, monkeypatch, lambda one: one.finish("ks_race", one.journal("ks_race"), {}, record)
    )
    assert outcome == ["conflict"]
    assert [e.seq for e in two.journal("ks_race")] == [1]
    row = two.session("ks_race")
    assert row is not None
    assert (row.status, row.record_root) == ("closed", record)
    two.close()
