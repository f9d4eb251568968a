"""The ``RuntimeStore`` contract, run against SQLite, PostgreSQL and memory alike."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest
from kestrel_protocol import canonical_json, root_of
from kestrel_protocol.store import (
    Horizon,
    JournalConflict,
    JournalEntry,
    Reached,
    RuntimeStore,
    SessionHead,
    SessionRow,
)
from kestrel_sdk.runtime.pentads import pentad_bytes, pentad_root
from kestrel_sdk.runtime.stores import open_runtime_store

from tests.store.conftest import tamper

SCENARIO_ROOT = "sha256:" + "a" * 64
OPENING, FIRST, SECOND, THIRD = ("sha256:" + c * 64 for c in "0fed")


@pytest.fixture
def store_url(runtime_store_url: str) -> str:
    return runtime_store_url


@pytest.fixture
def store(store_url: str) -> Iterator[RuntimeStore]:
    opened = open_runtime_store(store_url)
    yield opened
    opened.close()


def _second_writer(store: RuntimeStore, store_url: str) -> RuntimeStore:
    """Another writer on ``store``'s data: a second store on the same database (as a
    second process opens it), or for memory, whose data no other store sees, the same
    store from another thread."""
    return store if store_url == "memory:" else open_runtime_store(store_url)


def _row(sid: str = "ks_a", label: str = "1", principal: str = "alice") -> SessionRow:
    return SessionRow(sid, principal, "acme-trend", SCENARIO_ROOT, label, "open", None, None)


def _append(store: RuntimeStore, sid: str, seq: int, prev: str, frame: str, source: str) -> str:  # noqa: PLR0917
    root = pentad_root(sid, seq, prev, source)
    store.append(sid, seq, source, root, frame, prev=prev)
    return root


def test_the_adapter_is_the_port(store: RuntimeStore) -> None:
    assert isinstance(store, RuntimeStore)


def test_artifacts_are_content_addressed_verbatim_and_idempotent(store: RuntimeStore) -> None:
    obj = {"kind": "x", "b": [1, 2, {"z": "é"}], "a": None}
    root = store.put(obj)
    assert root == root_of(obj)
    assert store.get(root) == obj
    assert store.put(obj) == root
    assert store.has(root)
    assert store.lookup("sha256:" + "0" * 64) == (None, "missing")
    assert not store.has("sha256:" + "0" * 64)
    with pytest.raises(ValueError, match="claims root"):
        store.put({"kind": "x", "root": "sha256:" + "1" * 64})
    raw = canonical_json({"kind": "y"})
    store.put_raw(root_of({"kind": "y"}), raw)
    assert store.get(root_of({"kind": "y"})) == {"kind": "y"}


def test_a_corrupted_artifact_is_reported_and_never_served(
    store: RuntimeStore, store_url: str
) -> None:
    root = store.put({"kind": "x", "value": "100.00"})
    tamper(store_url, store).artifact_body(root, canonical_json({"kind": "x", "value": "999.00"}))
    assert store.lookup(root) == (None, "corrupt")
    assert store.get(root) is None
    assert not store.has(root)
    store.put({"kind": "x", "value": "100.00"})  # a put of the true bytes mends it
    assert store.lookup(root)[1] == "ok"


def test_sessions_labels_and_heads(store: RuntimeStore) -> None:
    assert store.insert_session(_row())
    assert not store.insert_session(_row())  # a concurrent open of the same id
    assert store.insert_session(_row("ks_b", "2"))
    assert store.insert_session(_row("ks_c", "1", "bob"))
    assert store.session("ks_a") == _row()
    assert store.session("ks_nope") is None
    assert [r.id for r in store.sessions()] == ["ks_a", "ks_b", "ks_c"]  # in opening order
    assert store.labels("alice", SCENARIO_ROOT) == {"1", "2"}
    assert store.labels("carol", SCENARIO_ROOT) == set()
    assert [r.id for r in store.sessions_of("alice")] == ["ks_a", "ks_b"]  # only hers
    assert [r.id for r in store.sessions_of("bob")] == ["ks_c"]
    assert store.sessions_of("carol") == []
    assert store.head("ks_a") == SessionHead(0, "open")
    assert store.head("ks_nope") is None
    _append(store, "ks_a", 1, OPENING, FIRST, "advance 1")
    assert store.head("ks_a") == SessionHead(1, "open", FIRST)
    assert [r.id for r in store.sessions("open")] == ["ks_a", "ks_b", "ks_c"]
    assert store.sessions("closed") == []


def test_the_journal_chains_each_submission_to_the_frame_before(store: RuntimeStore) -> None:
    store.insert_session(_row())
    one = _append(store, "ks_a", 1, OPENING, FIRST, "advance 1")
    two = _append(store, "ks_a", 2, FIRST, SECOND, "buy 1 ACME")
    three = _append(store, "ks_a", 3, SECOND, THIRD, "advance 2")
    assert store.journal("ks_a") == [
        JournalEntry(1, "advance 1", OPENING, one, FIRST),
        JournalEntry(2, "buy 1 ACME", FIRST, two, SECOND),
        JournalEntry(3, "advance 2", SECOND, three, THIRD),
    ]
    assert store.journal("ks_a", after=1) == store.journal("ks_a")[1:]
    assert store.journal("ks_a", after=3) == []
    # an open session's pentad is served, rebuilt from its journal row
    assert store.get(two) == {
        "session": "ks_a",
        "seq": 2,
        "prev": FIRST,
        "body": {"mediaType": "text/x-kestrel", "bytes": "buy 1 ACME"},
        "root": two,
    }


def test_a_taken_seq_is_a_conflict_and_writes_nothing(store: RuntimeStore) -> None:
    store.insert_session(_row())
    store.append(
        "ks_a", 1, "advance 1", pentad_root("ks_a", 1, OPENING, "advance 1"), FIRST,
        prev=OPENING, status="stood-down",
    )  # fmt: skip
    assert store.head("ks_a") == SessionHead(1, "stood-down", FIRST)  # written with the row
    other = pentad_root("ks_a", 1, OPENING, "advance 2")
    with pytest.raises(JournalConflict):
        store.append("ks_a", 1, "advance 2", other, SECOND, prev=OPENING, status="open")
    assert store.get(other) is None
    assert store.head("ks_a") == SessionHead(1, "stood-down", FIRST)
    _append(store, "ks_a", 2, FIRST, SECOND, "advance 1")
    with pytest.raises(JournalConflict):
        _append(store, "ks_a", 2, FIRST, THIRD, "advance 3")
    assert [e.seq for e in store.journal("ks_a")] == [1, 2]


def test_two_writers_racing_on_one_seq_never_fork(store: RuntimeStore, store_url: str) -> None:
    """Two writers on one store (two processes on a database; two threads on memory):
    each seq is won exactly once."""
    store.insert_session(_row())
    _append(store, "ks_a", 1, OPENING, FIRST, "advance 1")
    other = _second_writer(store, store_url)
    won: dict[int, list[str]] = {}
    start = threading.Barrier(2)

    def race(writer: RuntimeStore, name: str) -> None:
        start.wait()
        for seq in range(2, 42):
            prev = store.journal("ks_a")[-1].frame_root if seq > 2 else FIRST
            try:
                _append(writer, "ks_a", seq, prev, f"sha256:{seq:064x}", f"advance {name}")
            except JournalConflict:
                continue
            won.setdefault(seq, []).append(name)

    threads = [threading.Thread(target=race, args=(s, n)) for s, n in ((store, "a"), (other, "b"))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    if other is not store:
        other.close()
    assert all(len(names) == 1 for names in won.values()), won
    assert [e.seq for e in store.journal("ks_a")] == list(range(1, 42))
    assert set(won) == set(range(2, 42))


def _close(store: RuntimeStore, sid: str = "ks_a") -> tuple[list[JournalEntry], str]:
    journal = store.journal(sid)
    record = {"kind": "record", "pentads": [e.pentad_root for e in journal]}
    record_root = root_of(record)
    store.finish(sid, journal, {record_root: canonical_json(record)}, record_root)
    return journal, record_root


def test_finish_stores_the_pentads_and_closes(store: RuntimeStore, store_url: str) -> None:
    store.insert_session(_row())
    one = _append(store, "ks_a", 1, OPENING, FIRST, "advance 1")
    _append(store, "ks_a", 2, FIRST, SECOND, "advance 2")
    journal, record_root = _close(store)
    row = store.session("ks_a")
    assert row is not None
    assert (row.status, row.record_root) == ("closed", record_root)
    assert store.head("ks_a") == SessionHead(2, "closed", SECOND)
    assert store.get(record_root) == {"kind": "record", "pentads": [e.pentad_root for e in journal]}
    # the pentad is now an artifact of its own: served even if the journal row goes
    tamper(store_url, store).drop_journal_row(one)
    assert store.get(one) == root_and_pentad("ks_a", journal[0])[1]


def root_and_pentad(sid: str, entry: JournalEntry) -> tuple[str, dict[str, Any]]:
    import json

    root, body = pentad_bytes(sid, entry.seq, entry.prev, entry.source)
    return root, json.loads(body)


def test_finish_refuses_a_journal_that_moved_on(store: RuntimeStore) -> None:
    store.insert_session(_row())
    _append(store, "ks_a", 1, OPENING, FIRST, "advance 1")
    stale = store.journal("ks_a")
    _append(store, "ks_a", 2, FIRST, SECOND, "advance 2")  # another process's submit
    with pytest.raises(JournalConflict):
        store.finish("ks_a", stale, {}, "sha256:" + "9" * 64)
    assert store.head("ks_a") == SessionHead(2, "open", SECOND)  # nothing written
    _close(store)
    assert store.head("ks_a") == SessionHead(2, "closed", SECOND)


def test_a_journal_row_with_another_source_is_corrupt_not_served(
    store: RuntimeStore, store_url: str
) -> None:
    store.insert_session(_row())
    root = _append(store, "ks_a", 1, OPENING, FIRST, "advance 1")
    assert store.lookup(root)[1] == "ok"
    adversary = tamper(store_url, store)
    adversary.journal_source(root, "advance 9")
    assert store.lookup(root) == (None, "corrupt")
    adversary.journal_source(root, "advance 1")
    adversary.drop_journal_row("")  # the frame it followed is gone
    assert store.lookup(root) == (None, "corrupt")


def test_grades_and_operations(store: RuntimeStore) -> None:
    store.insert_session(_row())
    grade = {"kind": "grade", "score": "1.00"}
    store.set_grade("ks_a", root_of(grade), canonical_json(grade))
    row = store.session("ks_a")
    assert row is not None
    assert row.grade_root == root_of(grade)
    assert store.get(root_of(grade)) == grade
    assert store.operation("opt_x") is None
    store.put_operation("opt_x", "alice", "ks_a")
    store.put_operation("opt_x", "alice", "ks_a")  # idempotent
    assert store.operation("opt_x") == ("alice", "ks_a")


def test_everything_survives_reopening_but_memory(store: RuntimeStore, store_url: str) -> None:
    store.insert_session(_row())
    root = _append(store, "ks_a", 1, OPENING, FIRST, "advance 1")
    art = store.put({"kind": "x"})
    store.close()
    again = open_runtime_store(store_url)
    try:
        if store_url == "memory:":  # a new memory store is empty, whatever another held
            assert (again.session("ks_a"), again.get(art), again.sessions()) == (None, None, [])
            return
        assert again.session("ks_a") == _row()
        assert [e.pentad_root for e in again.journal("ks_a")] == [root]
        assert again.get(art) == {"kind": "x"}
    finally:
        again.close()


def test_a_shared_store_refuses_an_append_after_the_close(postgres_dsn: str) -> None:
    """Over a shared store another process may close a session at any time: a submission
    that arrives after the record is refused, never appended past it. (An embedded
    store's sessions are serialised by the one process that serves them.)"""
    store = open_runtime_store(postgres_dsn)
    assert store.shared
    store.insert_session(_row())
    _append(store, "ks_a", 1, OPENING, FIRST, "advance 1")
    _close(store)
    with pytest.raises(JournalConflict):
        _append(store, "ks_a", 2, FIRST, SECOND, "advance 2")
    assert [e.seq for e in store.journal("ks_a")] == [1]
    store.close()


def test_a_horizon_only_rises_counts_sessions_and_survives_reopening(
    store: RuntimeStore, store_url: str
) -> None:
    assert store.horizon("alice", "acme-trend") is None
    store.raise_horizon("alice", "acme-trend", 2519, "tape acme-trend read")  # before any open
    for sid, label, principal in (
        ("ks_a", "1", "alice"),
        ("ks_b", "2", "alice"),
        ("ks_c", "1", "bob"),
    ):
        store.insert_session(_row(sid, label, principal))
    assert store.count_session("alice", "acme-trend", "ks_a") == 1
    assert store.count_session("alice", "acme-trend", "ks_b") == 2
    store.raise_horizon("alice", "acme-trend", 40, "session ks_b reached bar 40")  # lower: kept
    assert store.horizon("alice", "acme-trend") == Horizon(2519, "tape acme-trend read", 2)
    assert store.horizon("bob", "acme-trend") is None  # per principal
    assert store.horizon("alice", "acme-chop") is None  # and per scenario
    assert store.count_session("bob", "acme-trend", "ks_c") == 1
    assert store.horizon("bob", "acme-trend") == Horizon(-1, "", 1)  # counted, nothing shown
    store.raise_horizon("bob", "acme-trend", 7, "session ks_c reached bar 7")
    store.close()
    again = open_runtime_store(store_url)
    try:
        if store_url == "memory:":  # nothing survives a memory store
            assert again.horizon("alice", "acme-trend") is None
            return
        assert again.horizon("alice", "acme-trend") == Horizon(2519, "tape acme-trend read", 2)
        assert again.horizon("bob", "acme-trend") == Horizon(7, "session ks_c reached bar 7", 1)
    finally:
        again.close()


def test_a_session_is_counted_once_whoever_counts_it(store: RuntimeStore, store_url: str) -> None:
    """Counting a session its opener or another writer counted already counts nothing
    (``None``), as does counting a session the store does not hold; each session counts
    once on its principal's row."""
    other = _second_writer(store, store_url)
    try:
        store.insert_session(_row())
        store.insert_session(_row("ks_b", "2"))
        assert store.count_session("alice", "acme-trend", "ks_a") == 1
        for writer in (store, other, store):
            assert writer.count_session("alice", "acme-trend", "ks_a") is None
            assert writer.count_session("alice", "acme-trend", "ks_a", short=True) is None
        assert store.count_session("alice", "acme-trend", "ks_z") is None
        assert store.horizon("alice", "acme-trend") == Horizon(-1, "", 1)
        assert other.count_session("alice", "acme-trend", "ks_b") == 2
        assert store.count_session("alice", "acme-trend", "ks_b") is None
        assert store.horizon("alice", "acme-trend") == Horizon(-1, "", 2)
    finally:
        if other is not store:
            other.close()


def test_a_horizon_raised_elsewhere_is_read_at_once(store: RuntimeStore, store_url: str) -> None:
    """Another process's raise (another connection on the store) is seen by the next
    read, however often the row was read here before (SQLite remembers rows read)."""
    other = _second_writer(store, store_url)
    try:
        store.insert_session(_row())
        store.insert_session(_row("ks_b", "2"))
        store.count_session("alice", "acme-trend", "ks_a")
        for _ in range(3):
            assert store.horizon("alice", "acme-trend") == Horizon(-1, "", 1)
        other.raise_horizon("alice", "acme-trend", 12, "session ks_b reached bar 12")
        assert store.horizon("alice", "acme-trend") == Horizon(12, "session ks_b reached bar 12", 1)
        assert other.count_session("alice", "acme-trend", "ks_b") == 2
        assert store.horizon("alice", "acme-trend") == Horizon(12, "session ks_b reached bar 12", 2)
    finally:
        if other is not store:
            other.close()


def test_a_step_answers_its_horizon_row_as_read_after_its_journal_row(
    store: RuntimeStore, store_url: str
) -> None:
    """A step's append reads the principal's horizon row in the same call, once its
    journal row is committed (the no-lookahead check reads it there): what another
    process raised or counted before the step is in it; a step refused (a taken seq, a
    closed session) answers nothing and writes nothing."""
    other = _second_writer(store, store_url)
    key = ("alice", "acme-trend")
    try:
        store.insert_session(_row())
        store.insert_session(_row("ks_b", "2"))
        store.count_session(*key, "ks_a")

        def step(seq: int, prev: str, frame: str, **kw: Any) -> Horizon | None:
            root = pentad_root("ks_a", seq, prev, "advance 1")
            return store.append("ks_a", seq, "advance 1", root, frame, prev=prev, **kw)

        assert step(1, OPENING, FIRST, horizon=key) == Horizon(-1, "", 1)  # with row 0
        other.raise_horizon(*key, 2519, "tape acme-trend read")
        assert other.count_session(*key, "ks_b") == 2
        assert step(2, FIRST, SECOND, horizon=key) == Horizon(2519, "tape acme-trend read", 2)
        assert step(3, SECOND, THIRD, horizon=("bob", "acme-trend")) is None  # no row
        assert step(4, THIRD, FIRST) is None  # none asked
        with pytest.raises(JournalConflict):
            step(4, THIRD, SECOND, horizon=key)
        _close(store)
        with pytest.raises(JournalConflict):
            step(5, FIRST, SECOND, horizon=key)
        assert [e.seq for e in store.journal("ks_a")] == [1, 2, 3, 4]
        assert store.journal("ks_a")[-1].frame_root == FIRST
    finally:
        if other is not store:
            other.close()


def test_a_session_keeps_its_first_read_behind_the_horizon_whoever_notes_it(
    store: RuntimeStore, store_url: str
) -> None:
    """Two processes serving one session each note the first submission they saw behind
    the horizon: the session keeps the one at the lowest seq, in whatever order they
    were noted, beside its 'unsealed' note."""
    other = _second_writer(store, store_url)
    try:
        store.insert_session(_row())
        store.note_unsealed("ks_a")
        other.add_read("ks_a", 4, 3, "session ks_b of the same principal had reached bar 9")
        store.add_read("ks_a", 2, 1, "tape acme-trend read")
        other.add_read("ks_a", 5, 4, "session ks_b of the same principal had reached bar 9")
        assert store.lookahead("ks_a") == (True, [(2, 1, "tape acme-trend read")])
    finally:
        if other is not store:
            other.close()


def test_a_principals_sessions_on_a_lineage_are_found_with_their_clocks(
    store: RuntimeStore, store_url: str
) -> None:
    """Each session keeps the lineage it was counted on and the clock bar its last step
    reached (a value of the step's journal row): ``reached`` finds the principal's
    sessions on a lineage whatever scenario of it they ran on, for any writer; a session
    never stepped has no bar, and sessions uncounted, of another principal or on another
    lineage are not found."""
    other = _second_writer(store, store_url)
    twin = SessionRow("ks_b", "alice", "aaa-copy", "sha256:" + "c" * 64, "1", "open", None, None)
    try:
        for row in (_row(), twin, _row("ks_c", "1", "bob"), _row("ks_d", "2"), _row("ks_e", "3")):
            store.insert_session(row)
        for principal, key, sid in (
            ("alice", "lineage", "ks_a"),
            ("alice", "lineage", "ks_b"),
            ("bob", "lineage", "ks_c"),
            ("alice", "another", "ks_d"),
        ):
            store.count_session(principal, key, sid)
        prev = "sha256:" + "0" * 64
        for seq, clock in ((1, 5), (2, 9)):
            frame = f"sha256:{seq}" + "0" * 63
            source = f"advance {clock}"
            root = pentad_root("ks_a", seq, prev, source)
            store.append("ks_a", seq, source, root, frame, prev=prev, clock=clock)
            prev = frame
        found = sorted(other.reached("alice", "lineage"), key=lambda r: r.session)
        assert found == [
            Reached("ks_a", "acme-trend", "1", False, 9),
            Reached("ks_b", "aaa-copy", "1", False, None),
        ]
        assert other.reached("alice", "nothing") == []
    finally:
        if other is not store:
            other.close()
