"""Any replica serves any session: several runtimes on one store (as several door
processes would be), the journal the truth, engines a bounded cache."""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from kestrel_protocol import GradeResult, KestrelError, OperationResumption
from kestrel_sdk.runtime import grading as grading_module
from kestrel_sdk.runtime.engine import compute_grade, measure_grade
from kestrel_sdk.runtime.service import Runtime
from kestrel_sdk.runtime.stores import open_runtime_store

SCENARIO = "acme-trend"
SOURCES = [
    "buy 10 ACME as a\nadvance 3",
    "sell 5 ACME limit 1000.00 tif gtc",
    "advance 7",
    "buy 3 ACME stop 1.00 tif day\nadvance 2",
    "cancel all\nadvance 1",
    "sell 8 ACME\nadvance 4",
]


def _runtime(url: str, **options: int) -> Runtime:
    return Runtime(store=open_runtime_store(url), **options)  # type: ignore[arg-type]


@pytest.fixture
def replicas(store_url: str) -> Iterator[tuple[Runtime, Runtime]]:
    one, two = _runtime(store_url), _runtime(store_url)
    yield one, two
    one.shutdown()
    two.shutdown()


def _reference(tmp_path: Path, label: str, sources: list[str]) -> tuple[list[str], str]:
    """The pentad roots and grade root of ``sources`` run on one SQLite-backed runtime."""
    alone = Runtime(tmp_path / "reference")
    sid = alone.open_session("alice", SCENARIO, label).session_id
    assert sid is not None
    roots = [alone.submit("alice", sid, s).model().pentad.root for s in sources]
    grade = alone.grade("alice", sid)
    assert isinstance(grade, GradeResult)
    alone.shutdown()
    return roots, grade.root


def test_submits_alternating_between_replicas_are_one_session(
    replicas: tuple[Runtime, Runtime], tmp_path: Path
) -> None:
    one, two = replicas
    sid = one.open_session("alice", SCENARIO, "alt").session_id
    assert sid is not None
    roots = []
    for n, source in enumerate(SOURCES):
        response = (one, two)[n % 2].submit("alice", sid, source).model()
        assert response.pentad.seq == n + 1  # each replica saw what the other applied
        roots.append(response.pentad.root)
    record = two.close("alice", sid)
    assert record.pentads == roots
    grade = one.grade("alice", sid)
    assert isinstance(grade, GradeResult)
    assert (roots, grade.root) == _reference(tmp_path, "alt", SOURCES)
    assert two.verify(grade).ok


def test_a_shared_store_serves_fresh_reads_on_every_replica(postgres_dsn: str) -> None:
    one, two = _runtime(postgres_dsn), _runtime(postgres_dsn)
    sid = one.open_session("alice", SCENARIO, "reads").session_id
    assert sid is not None
    assert two.frame("alice", sid).model().frame.seq == 0  # two has it cached now
    one.submit("alice", sid, SOURCES[0]).model()
    one.submit("alice", sid, SOURCES[1]).model()
    assert two.frame("alice", sid).text == one.frame("alice", sid).text  # caught up: seq 2
    assert two.blotter("alice", sid) == one.blotter("alice", sid)
    one.close("alice", sid)
    with pytest.raises(KestrelError) as closed:
        two.submit("alice", sid, "advance 1").model()  # closed by the other replica
    assert closed.value.code == "SESSION_CLOSED"
    assert two.frame("alice", sid).text == one.frame("alice", sid).text
    one.shutdown()
    two.shutdown()


def test_replicas_racing_on_one_session_never_fork(
    replicas: tuple[Runtime, Runtime], tmp_path: Path
) -> None:
    one, two = replicas
    sid = one.open_session("alice", SCENARIO, "race").session_id
    assert sid is not None
    seqs: list[int] = []
    start = threading.Barrier(4)

    def drive(runtime: Runtime) -> None:
        start.wait()
        for _ in range(10):
            seqs.append(runtime.submit("alice", sid, "buy 1 ACME\nadvance 1").model().pentad.seq)

    threads = [threading.Thread(target=drive, args=(r,)) for r in (one, two, one, two)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert sorted(seqs) == list(range(1, 41))  # every submission landed once, in one chain
    journal = one.store.journal(sid)
    assert [e.seq for e in journal] == list(range(1, 41))
    assert all(e.prev == p.frame_root for p, e in itertools.pairwise(journal))
    record = two.close("alice", sid)
    reference, _ = _reference(tmp_path, "race", ["buy 1 ACME\nadvance 1"] * 40)
    assert record.pentads == reference


def test_a_grade_operation_resumes_on_another_replica(
    replicas: tuple[Runtime, Runtime], monkeypatch: pytest.MonkeyPatch
) -> None:
    one, two = replicas
    sid = one.open_session("alice", SCENARIO, "op").session_id
    assert sid is not None
    for source in SOURCES:
        one.submit("alice", sid, source).model()
    # the first replica's grade is held until the second has answered: without the gate
    # a small grade can finish inside a zero budget, and the race decides the test
    release, calls = threading.Event(), list[None]()

    def held_first(grade: Callable[..., GradeResult]) -> Callable[..., GradeResult]:
        def held(*args: Any, **kwargs: Any) -> GradeResult:
            calls.append(None)
            if len(calls) == 1:
                release.wait(30)
            return grade(*args, **kwargs)

        return held

    # the first replica holds the session live (it measures its engine); the second
    # replays it: either way of grading is gated
    monkeypatch.setattr(grading_module, "compute_grade", held_first(compute_grade))
    monkeypatch.setattr(grading_module, "measure_grade", held_first(measure_grade))
    started = one.grade("alice", sid, budget=0)
    assert isinstance(started, OperationResumption)
    try:
        resumed = two.resume("alice", started.token, budget=30)
        assert isinstance(resumed, GradeResult)  # computed by the second replica itself
        with pytest.raises(KestrelError) as foreign:
            two.resume("mallory", started.token)
        assert foreign.value.code == "UNKNOWN_OPERATION"
    finally:
        release.set()
    final = one.resume("alice", started.token, budget=30)
    assert isinstance(final, GradeResult)
    assert final.root == resumed.root


def test_evicted_sessions_replay_with_identical_roots(store_url: str, tmp_path: Path) -> None:
    runtime = _runtime(store_url, max_live_sessions=2)
    sids = []
    for n in range(5):
        sid = runtime.open_session("alice", SCENARIO, f"e{n}").session_id
        assert sid is not None
        runtime.submit("alice", sid, SOURCES[0]).model()
        sids.append(sid)
        assert runtime.live_sessions <= 2
    for sid in sids:  # each was evicted and comes back by replay, then goes on
        runtime.submit("alice", sid, SOURCES[1]).model()
        assert runtime.live_sessions <= 2
    roots = [runtime.close("alice", sid).pentads for sid in sids]
    runtime.shutdown()
    reference, _ = _reference(tmp_path, "e0", SOURCES[:2])
    assert roots[0] == reference
    assert all(len(r) == 2 for r in roots)
