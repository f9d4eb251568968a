"""A session id is its principal's, scenario's and label's: a session discarded by one
runtime (``Runtime.discard``) frees its label, and the next session opened (under that
label, or without one: the first free label is taken) is a new session under the same
id. Another runtime on the store (another process) that still holds the
old one in memory must answer the new one on every read and submit: never the old
frame, never a refusal the old state makes, and never a journal row that continues the
old chain under the new session (which would leave it unreadable for every process).

And, the same rule in the ordinary case: a copy held here that another process moved on
(SQLite's processes meet through the journal, not by polling) refuses nothing from its
old state; a refusal is answered only from a copy current with the store."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from kestrel_protocol import GradeResult
from kestrel_protocol.store import JournalConflict, SessionHead, SessionRow
from kestrel_sdk.runtime import Runtime
from kestrel_sdk.runtime.pentads import pentad_root
from kestrel_sdk.runtime.stores import open_runtime_store


@pytest.fixture
def runtimes(store_url: str, tmp_path: Path) -> Iterator[tuple[Runtime, Runtime]]:
    """Two runtimes on one store: the keeper, and the reader that caches sessions."""
    keeper, reader = (Runtime(tmp_path, store=open_runtime_store(store_url)) for _ in "kr")
    yield keeper, reader
    keeper.shutdown()
    reader.shutdown()


def _opened(runtime: Runtime, label: str | None = None) -> str:
    sid = runtime.open_session("alice", "acme-trend", label).session_id
    assert sid is not None
    return sid


def _reopened(keeper: Runtime, sid: str) -> None:
    """The keeper proves ``sid``, discards it and opens a session without a label: the
    first free label is the discarded one's again, and so is the id."""
    assert isinstance(keeper.grade("alice", sid), GradeResult)
    assert keeper.discard("alice", sid)
    assert _opened(keeper) == sid


@pytest.mark.parametrize("held", ["closed", "open"])
@pytest.mark.parametrize("steps", [1, 3])
def test_a_session_opened_again_elsewhere_is_the_new_one_on_every_read_here(
    runtimes: tuple[Runtime, Runtime], held: str, steps: int
) -> None:
    """The reader holds the old session (closed, or open at seq 1 with a position) when
    the keeper discards it, opens it again and steps it to the old seq or past it: the
    reader's frame, blotter and history are the new session's."""
    keeper, reader = runtimes
    sid = _opened(keeper)
    keeper.submit("alice", sid, "buy 1 ACME\nadvance 30")
    if held == "closed":
        keeper.close("alice", sid)
    old = reader.frame("alice", sid).model().frame  # held here from now on
    assert (old.clock.bar, len(old.positions)) == (30, 1)
    _reopened(keeper, sid)
    for _ in range(steps):
        keeper.submit("alice", sid, "advance 5")
    new = keeper.frame("alice", sid).model()
    seen = reader.frame("alice", sid).model()
    assert (seen.frame.seq, seen.frame.clock.bar, seen.frame.status) == (steps, 5 * steps, "open")
    assert (seen.frame_root, seen.frame.positions) == (new.frame_root, [])
    assert reader.blotter("alice", sid).orders == []
    assert reader.history("alice", sid, 3).bars[-1].time == new.frame.clock.time


def test_a_grade_here_is_of_the_session_opened_again_not_of_the_one_closed_here(
    runtimes: tuple[Runtime, Runtime],
) -> None:
    """The reader closed the old session itself (it keeps what its close computed for the
    grade and proof); the keeper proves it, discards it, opens it again and closes the
    new one: the reader's grade and proof are the new session's, and the grade stored
    for it is too (not the old session's, measured on the engine kept here)."""
    keeper, reader = runtimes
    sid = _opened(keeper)
    keeper.submit("alice", sid, "buy 1 ACME\nadvance 30")
    old = reader.close("alice", sid)  # closed here: what the close computed is kept
    _reopened(keeper, sid)
    keeper.submit("alice", sid, "advance 5")
    new = keeper.close("alice", sid)
    assert new.root != old.root
    graded = reader.grade("alice", sid)
    assert isinstance(graded, GradeResult)
    assert (graded.record, graded.head) == (new.root, new.head)
    assert reader.proof("alice", sid).model().record.root == new.root
    assert keeper.grade("alice", sid) == graded


def test_a_copy_of_the_old_session_never_writes_into_the_new_ones_chain(
    runtimes: tuple[Runtime, Runtime], store_url: str, tmp_path: Path
) -> None:
    """The reader's copy is at the seq the new session reached when it is asked to submit
    (a submission goes to the store without a read first): the step lands after the new
    session's, as any step another process made first, and the journal stays one chain
    that any process replays and a grade proves."""
    keeper, reader = runtimes
    sid = _opened(keeper)
    keeper.submit("alice", sid, "buy 1 ACME\nadvance 30")
    assert reader.frame("alice", sid).model().frame.seq == 1  # held here, open at seq 1
    _reopened(keeper, sid)
    keeper.submit("alice", sid, "advance 5")
    answered = reader.submit("alice", sid, "advance 2").model()
    assert (answered.pentad.seq, answered.delivery.frame.clock.bar) == (2, 7)
    assert answered.delivery.frame.positions == []
    third = Runtime(tmp_path, store=open_runtime_store(store_url))
    try:
        assert third.frame("alice", sid).model().frame_root == answered.delivery.frame_root
        assert isinstance(third.grade("alice", sid), GradeResult)
    finally:
        third.shutdown()


def test_a_copy_the_old_session_stood_down_refuses_nothing_of_the_new_one(
    runtimes: tuple[Runtime, Runtime],
) -> None:
    """The reader holds the old session stood down; the new one is open: a submission
    is applied to it, not refused ``SESSION_STOOD_DOWN``."""
    keeper, reader = runtimes
    sid = _opened(keeper)
    keeper.submit("alice", sid, "advance 3\nstand down")
    assert reader.frame("alice", sid).model().frame.status == "stood-down"  # held here
    _reopened(keeper, sid)
    answered = reader.submit("alice", sid, "advance 4").model()
    assert (answered.pentad.seq, answered.delivery.frame.clock.bar) == (1, 4)


def test_a_copy_another_process_moved_on_refuses_nothing_from_its_old_state(
    runtimes: tuple[Runtime, Runtime],
) -> None:
    """The keeper places an order on a session the reader holds at an earlier seq: the
    reader's cancel of that order is applied (after the keeper's step), not refused as
    a reference to an order that never existed (K204, the reader's old state)."""
    keeper, reader = runtimes
    sid = _opened(keeper, "shared")
    keeper.submit("alice", sid, "advance 2")
    assert reader.frame("alice", sid).model().frame.seq == 1  # held here at seq 1
    keeper.submit("alice", sid, "buy 1 ACME limit 1.00 tif gtc as cheap\nadvance 1")
    answered = reader.submit("alice", sid, "cancel cheap").model()
    assert answered.pentad.seq == 3
    assert [e.type for e in answered.delivery.frame.events] == ["cancelled"]


@pytest.mark.parametrize("status", [None, "stood-down"])
def test_the_store_refuses_a_step_on_a_frame_other_than_the_sessions_last(
    runtime_store_url: str, status: str | None
) -> None:
    """The port's side of it (SQLite, PostgreSQL and memory): an append whose ``prev``
    is not the frame of the session's last row raises ``JournalConflict`` and writes
    nothing, with a status or without; on the last frame it is kept."""
    store = open_runtime_store(runtime_store_url)
    sid = "ks_" + "r" * 26
    opening, first, second, other = ("sha256:" + c * 64 for c in "01f2")
    try:
        store.insert_session(
            SessionRow(sid, "alice", "acme-trend", "sha256:" + "a" * 64, "ep", "open", None, None)
        )
        store.append(
            sid, 1, "advance 1", pentad_root(sid, 1, opening, "advance 1"), first, prev=opening
        )
        source = "advance 2"
        with pytest.raises(JournalConflict):
            store.append(
                sid,
                2,
                source,
                pentad_root(sid, 2, other, source),
                second,
                prev=other,
                status=status,
            )
        assert [entry.seq for entry in store.journal(sid)] == [1]
        assert store.head(sid) == SessionHead(1, "open", first)
        store.append(
            sid, 2, source, pentad_root(sid, 2, first, source), second, prev=first, status=status
        )
        assert [(e.seq, e.prev) for e in store.journal(sid)] == [(1, opening), (2, first)]
    finally:
        store.close()
