"""``discard``, by the ``RuntimeStore`` contract: SQLite, PostgreSQL and memory alike.

A closed, graded session forgotten whole (what the gym's private store does with each
episode it has proved): its row, steps, lookahead reads, grade tokens and every artifact
no other session owns; nothing else touched, horizons included. Another runtime on
the store (another process) that had the session cached then answers it as unknown."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from kestrel_protocol import GradeResult, KestrelError, canonical_json, root_of
from kestrel_protocol.store import Horizon, RuntimeStore, SessionRow
from kestrel_sdk.runtime import Runtime
from kestrel_sdk.runtime.pentads import pentad_root
from kestrel_sdk.runtime.stores import open_runtime_store

SCENARIO_ROOT = "sha256:" + "a" * 64
OPENING, FIRST, SECOND = ("sha256:" + c * 64 for c in "0fe")
SHARED = {"kind": "scenario-note", "text": "owned by every session that closed with it"}


@pytest.fixture
def store(runtime_store_url: str) -> Iterator[RuntimeStore]:
    opened = open_runtime_store(runtime_store_url)
    yield opened
    opened.close()


def _session(store: RuntimeStore, sid: str, *, close: bool, grade: bool) -> dict[str, str]:
    """A session of two steps, closed and graded as asked: the roots of what it made."""
    store.insert_session(
        SessionRow(sid, "alice", "acme-trend", SCENARIO_ROOT, sid, "open", None, None)
    )
    made: dict[str, str] = {}
    for seq, (prev, frame) in enumerate([(OPENING, FIRST), (FIRST, SECOND)], start=1):
        root = pentad_root(sid, seq, prev, f"advance {seq}")
        store.append(sid, seq, f"advance {seq}", root, frame, prev=prev)
        made[f"pentad {seq}"] = root
    store.add_read(sid, 1, 1, "tape acme-trend read")
    if close:
        record = {"kind": "record", "session": sid}
        artifacts = {root_of(o): canonical_json(o) for o in (record, SHARED)}
        store.finish(sid, store.journal(sid), artifacts, root_of(record))
        made["record"], made["shared"] = root_of(record), root_of(SHARED)
    if grade:
        body = {"kind": "grade", "session": sid}
        store.set_grade(sid, root_of(body), canonical_json(body))
        store.put_operation(f"opt_{sid}", "alice", sid)
        made["grade"] = root_of(body)
    return made


def _found(store: RuntimeStore, roots: dict[str, str]) -> dict[str, bool]:
    return {what: store.lookup(root)[1] == "ok" for what, root in roots.items()}


def test_a_proved_session_is_forgotten_whole_and_its_principals_horizon_stays(
    store: RuntimeStore,
) -> None:
    a = _session(store, "ks_a", close=True, grade=True)
    store.count_session("alice", "acme-trend", "ks_a")
    store.raise_horizon("alice", "acme-trend", 7, "session ks_a reached bar 7")
    b = _session(store, "ks_b", close=True, grade=True)
    assert all(_found(store, a).values())
    assert all(_found(store, b).values())

    assert store.discard("ks_a")
    assert store.session("ks_a") is None
    assert [row.id for row in store.sessions()] == ["ks_b"]
    # every artifact only it owned is gone; the one ks_b owns too stays
    assert _found(store, a) == {w: w == "shared" for w in a}
    assert all(_found(store, b).values())
    assert store.operation("opt_ks_a") is None
    assert store.operation("opt_ks_b") is not None
    assert store.lookahead("ks_a") == (False, [])
    assert store.horizon("alice", "acme-trend") == Horizon(7, "session ks_a reached bar 7", 1)
    assert not store.discard("ks_a")  # gone: nothing more to forget

    assert store.discard("ks_b")
    assert not any(_found(store, b).values())  # the last owner of the shared one went too


def test_an_open_or_ungraded_session_is_not_discarded_and_nothing_changes(
    store: RuntimeStore,
) -> None:
    open_roots = _session(store, "ks_open", close=False, grade=False)
    closed_roots = _session(store, "ks_closed", close=True, grade=False)
    before = (store.stored_sessions(), store.journal("ks_open"), store.journal("ks_closed"))
    assert not store.discard("ks_open")
    assert not store.discard("ks_closed")
    assert not store.discard("ks_never")
    assert (store.stored_sessions(), store.journal("ks_open"), store.journal("ks_closed")) == (
        before
    )
    assert all(_found(store, open_roots).values())
    assert all(_found(store, closed_roots).values())


def _opened(runtime: Runtime) -> str:
    sid = runtime.open_session("alice", "acme-trend").session_id
    assert sid is not None
    return sid


def test_a_session_discarded_by_another_runtime_is_unknown_on_every_read_here(
    store_url: str, tmp_path: Path
) -> None:
    """Two runtimes on one store (two processes' caches): the reader has each closed
    session cached (it read its frame) when the other discards them; each read here,
    the first on its session, then answers what the store says, ``UNKNOWN_SESSION``,
    not a missing artifact or a closed session it still believes in (and the reader's
    own discard finds nothing to forget)."""
    keeper, reader = (Runtime(tmp_path, store=open_runtime_store(store_url)) for _ in "kr")
    reads: dict[str, Callable[[str], object]] = {
        "frame": lambda sid: reader.frame("alice", sid),
        "blotter": lambda sid: reader.blotter("alice", sid),
        "history": lambda sid: reader.history("alice", sid, 5),
        "news": lambda sid: reader.news("alice", sid),
        "close": lambda sid: reader.close("alice", sid),
        "grade": lambda sid: reader.grade("alice", sid),
        "submit": lambda sid: reader.submit("alice", sid, "advance 1"),
        "proof": lambda sid: reader.proof("alice", sid),
    }
    sessions = {name: _opened(keeper) for name in [*reads, "discard"]}
    for sid in sessions.values():
        keeper.submit("alice", sid, "buy 1 ACME\nadvance 30")
        assert isinstance(keeper.grade("alice", sid), GradeResult)
        assert reader.frame("alice", sid).model().frame.clock.bar == 30  # cached closed, here
    for sid in sessions.values():
        assert keeper.discard("alice", sid)
    for name, read in reads.items():
        with pytest.raises(KestrelError) as gone:
            read(sessions[name])
        assert (name, gone.value.code) == (name, "UNKNOWN_SESSION")
    assert not reader.discard("alice", sessions["discard"])
    keeper.shutdown()
    reader.shutdown()


@pytest.mark.parametrize("reopener", ["this runtime", "another runtime"])
def test_a_session_discarded_and_opened_again_has_its_grade_stored(
    store_url: str, tmp_path: Path, reopener: str
) -> None:
    """A session graded here, discarded and opened again under its label (here, or by
    another process on the store) and made the same way (behind the tape its principal
    read, as the first was), is graded here again: the same root, stored as its grade
    (an artifact every reader finds, and a second discard forgets it). Before, this
    runtime answered the grade its first session's work left in memory and stored
    nothing: the root was unknown and the session refused discard."""
    here = Runtime(tmp_path, store=open_runtime_store(store_url))
    there = (
        here
        if reopener == "this runtime"
        else Runtime(tmp_path, store=open_runtime_store(store_url))
    )

    def made() -> str:
        sid = there.open_session("alice", "acme-trend", "again").session_id
        assert sid is not None
        there.submit("alice", sid, "buy 1 ACME\nadvance 30")
        return sid

    there.tape("alice", "acme-trend")
    sid = made()
    first = here.grade("alice", sid)
    assert isinstance(first, GradeResult)
    assert there.discard("alice", sid)
    assert made() == sid
    there.close("alice", sid)
    again = here.grade("alice", sid)
    assert isinstance(again, GradeResult)
    assert again.root == first.root
    assert there.artifact(again.root)["root"] == again.root
    assert there.discard("alice", sid)
    here.shutdown()
    there.shutdown()
