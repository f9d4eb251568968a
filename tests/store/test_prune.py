"""Pruning, by the ``RuntimeStore`` contract: SQLite, PostgreSQL and memory alike.

A closed, graded session's steps go (journal rows, pentads, lookahead reads, grade
tokens); its row, record, head, blotter and grade stay, and horizons are never touched.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
from kestrel_protocol import canonical_json, root_of
from kestrel_protocol.store import Horizon, RuntimeStore, SessionHead, SessionRow
from kestrel_sdk.runtime.pentads import pentad_root
from kestrel_sdk.runtime.stores import open_runtime_store

SCENARIO_ROOT = "sha256:" + "a" * 64
OPENING, FIRST, SECOND = ("sha256:" + c * 64 for c in "0fe")


@pytest.fixture
def store(runtime_store_url: str) -> Iterator[RuntimeStore]:
    opened = open_runtime_store(runtime_store_url)
    yield opened
    opened.close()


def _session(store: RuntimeStore, sid: str, label: str, *, close: bool, grade: bool) -> list[str]:
    """A session of two steps (closed and graded as asked); its pentad roots."""
    store.insert_session(
        SessionRow(sid, "alice", "acme-trend", SCENARIO_ROOT, label, "open", None, None)
    )
    roots = []
    for seq, (prev, frame, source) in enumerate(
        [(OPENING, FIRST, "advance 1"), (FIRST, SECOND, f"buy {label} ACME")], start=1
    ):
        root = pentad_root(sid, seq, prev, source)
        store.append(sid, seq, source, root, frame, prev=prev)
        roots.append(root)
    store.add_read(sid, 1, 1, "tape acme-trend read")
    if close:
        journal = store.journal(sid)
        record = {"kind": "record", "session": sid, "pentads": roots}
        store.finish(sid, journal, {root_of(record): canonical_json(record)}, root_of(record))
    if grade:
        body = {"kind": "grade", "session": sid}
        store.set_grade(sid, root_of(body), canonical_json(body))
        store.put_operation(f"opt_{sid}", "alice", sid)
    return roots


def test_a_close_is_dated_by_the_store(store: RuntimeStore, runtime_store_url: str) -> None:
    started = datetime.now(UTC).replace(microsecond=0) - timedelta(seconds=1)
    _session(store, "ks_a", "1", close=True, grade=False)
    _session(store, "ks_b", "2", close=False, grade=False)
    by_id = {s.id: s for s in store.stored_sessions()}
    assert [s.id for s in store.stored_sessions()] == ["ks_a", "ks_b"]
    assert (by_id["ks_b"].status, by_id["ks_b"].closed_at) == ("open", None)
    assert by_id["ks_a"].steps == by_id["ks_b"].steps == 3  # row 0 and two steps
    assert by_id["ks_a"].step_bytes > by_id["ks_b"].step_bytes  # closed: its pentads too
    closed_at = by_id["ks_a"].closed_at
    if runtime_store_url == "memory:":  # keeps no time at all
        assert closed_at is None
        return
    assert closed_at is not None
    closed = datetime.strptime(closed_at, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    assert started <= closed <= datetime.now(UTC) + timedelta(seconds=1)


def test_prune_removes_the_steps_and_keeps_the_summary_and_horizons(
    store: RuntimeStore,
) -> None:
    pruned_roots = _session(store, "ks_a", "1", close=True, grade=True)
    kept_roots = _session(store, "ks_b", "2", close=True, grade=True)
    store.count_session("alice", "acme-trend", "ks_a")
    store.raise_horizon("alice", "acme-trend", 2519, "tape acme-trend read")
    before = store.session("ks_a")
    assert before is not None
    assert before.record_root
    assert before.grade_root
    record, grade = store.get(before.record_root), store.get(before.grade_root)

    assert store.pruned("ks_a") is None
    assert store.prune("ks_a")
    assert store.pruned("ks_a") is not None
    assert not store.prune("ks_a")  # already pruned: nothing to do

    assert store.session("ks_a") == before  # its row (status, record, grade) as it was
    assert (store.get(before.record_root), store.get(before.grade_root)) == (record, grade)
    assert store.journal("ks_a") == []
    assert store.head("ks_a") == SessionHead(0, "closed")
    assert [store.lookup(root)[1] for root in pruned_roots] == ["missing", "missing"]
    assert store.lookahead("ks_a") == (False, [])
    assert store.operation("opt_ks_a") is None
    assert store.labels("alice", SCENARIO_ROOT) == {"1", "2"}  # its label stays used
    assert store.horizon("alice", "acme-trend") == Horizon(2519, "tape acme-trend read", 1)
    stored = {s.id: s for s in store.stored_sessions()}
    assert (stored["ks_a"].steps, stored["ks_a"].step_bytes) == (0, 0)
    # the other session is untouched
    assert [store.lookup(root)[1] for root in kept_roots] == ["ok", "ok"]
    assert len(store.journal("ks_b")) == 2
    assert store.operation("opt_ks_b") == ("alice", "ks_b")
    assert stored["ks_b"].pruned_at is None


def test_prune_leaves_open_and_ungraded_sessions_as_they_are(store: RuntimeStore) -> None:
    open_roots = _session(store, "ks_open", "1", close=False, grade=False)
    ungraded = _session(store, "ks_ungraded", "2", close=True, grade=False)
    assert not store.prune("ks_open")
    assert not store.prune("ks_ungraded")
    assert not store.prune("ks_nope")
    assert [store.lookup(root)[1] for root in open_roots + ungraded] == ["ok"] * 4
    assert len(store.journal("ks_open")) == len(store.journal("ks_ungraded")) == 2
    assert store.pruned("ks_open") is store.pruned("ks_ungraded") is None


def test_reclaim_gives_the_space_back(store: RuntimeStore, runtime_store_url: str) -> None:
    sid = "ks_big"
    store.insert_session(
        SessionRow(sid, "alice", "acme-trend", SCENARIO_ROOT, "1", "open", None, None)
    )
    prev = OPENING
    for seq in range(1, 2001):
        source = f"advance 1  # step {seq} " + "x" * 200
        frame = root_of({"frame": seq})
        store.append(sid, seq, source, pentad_root(sid, seq, prev, source), frame, prev=prev)
        prev = frame
    journal = store.journal(sid)
    store.finish(sid, journal, {}, root_of({"record": sid}))
    store.set_grade(sid, root_of({"grade": sid}), canonical_json({"grade": sid}))
    store.reclaim()
    full = store.footprint()
    assert store.prune(sid)
    store.reclaim()
    if runtime_store_url == "memory:":
        assert full == store.footprint() == 0  # nothing on disk
        return
    assert full - store.footprint() > 2000 * 200  # at least the sources' bytes came back
