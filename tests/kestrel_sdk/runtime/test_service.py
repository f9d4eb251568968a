from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import rfc8785
from kestrel_protocol import (
    Delivery,
    GradeResult,
    KestrelError,
    Offer,
    OperationResumption,
    Payment,
    Pentad,
    SessionRecord,
    SessionResponse,
    root_of,
)
from kestrel_sdk.runtime import grading as grading_module
from kestrel_sdk.runtime.engine import compute_grade, measure_grade
from kestrel_sdk.runtime.ids import session_id
from kestrel_sdk.runtime.pentads import pentad_bytes
from kestrel_sdk.runtime.service import Runtime
from kestrel_sdk.runtime.stores.sqlite import SqliteStore


def _sqlite(runtime: Runtime) -> SqliteStore:
    """The runtime's store, which these tests reach into: the embedded SQLite one."""
    assert isinstance(runtime.store, SqliteStore)
    return runtime.store


SCENARIO = "acme-trend"


@pytest.fixture
def runtime(tmp_path: Path) -> Iterator[Runtime]:
    rt = Runtime(tmp_path / "home")
    yield rt
    rt.shutdown()


def _code(fn: Callable[[], Any]) -> str:
    with pytest.raises(KestrelError) as err:
        fn()
    return err.value.code


def _open(rt: Runtime, principal: str = "local", label: str | None = None) -> str:
    opened = rt.open_session(principal, SCENARIO, label)
    assert not opened.gated
    assert opened.session_id is not None
    return opened.session_id


def test_open_takes_next_label_and_is_idempotent_by_label(runtime: Runtime) -> None:
    root = runtime.scenario("local", SCENARIO).root
    first = _open(runtime)
    assert first == session_id("local", root, "1")
    second = _open(runtime)
    assert second == session_id("local", root, "2")
    assert _open(runtime, label="1") == first  # resume, not a new session
    runtime.submit("local", first, "advance 2").model()
    assert _open(runtime, label="1") == first
    assert runtime.frame("local", first).model().frame.clock.bar == 2
    runtime.close("local", first)
    assert _code(lambda: _open(runtime, label="1")) == "SESSION_CLOSED"
    assert _open(runtime) == session_id("local", root, "3")
    assert _open(runtime, label="mine") == session_id("local", root, "mine")


def test_unknown_scenario_and_unknown_session(runtime: Runtime) -> None:
    assert _code(lambda: runtime.open_session("local", "no-such")) == "UNKNOWN_SCENARIO"
    assert _code(lambda: runtime.frame("local", "ks_nothing")) == "UNKNOWN_SESSION"
    sid = _open(runtime, "alice")
    for call in (
        lambda: runtime.submit("bob", sid, "advance 1").model(),
        lambda: runtime.frame("bob", sid),
        lambda: runtime.blotter("bob", sid),
        lambda: runtime.close("bob", sid),
        lambda: runtime.grade("bob", sid),
    ):
        assert _code(call) == "UNKNOWN_SESSION"
    assert _open(runtime, "bob", label="1") != sid  # bob's label 1 is bob's own session


def test_submit_binds_a_pentad_to_the_frame_it_applied_to(runtime: Runtime) -> None:
    sid = _open(runtime)
    opening = runtime.frame("local", sid).model()
    assert opening.frame.seq == 0
    assert opening.frame_root == root_of(opening.frame)
    source = "buy 10 ACME   # exact bytes, comment and all\nadvance 3\n"
    response = runtime.submit("local", sid, source).model()
    assert response.disposition == "applied"
    assert response.stand_down is None
    pentad = Pentad.parse(response.pentad.to_json())  # the root verifies
    assert (pentad.session, pentad.seq, pentad.prev) == (sid, 1, opening.frame_root)
    assert pentad.body.bytes == source
    assert pentad.body.media_type == "text/x-kestrel"
    assert response.delivery.frame.seq == 1
    assert response.delivery.frame_root == root_of(response.delivery.frame)
    assert runtime.artifact(pentad.root) == pentad.to_json()
    again = runtime.frame("local", sid).model()
    assert again.frame_root == response.delivery.frame_root
    nxt = runtime.submit("local", sid, "advance 1").model()
    assert nxt.pentad.prev == response.delivery.frame_root
    assert nxt.pentad.seq == 2


def test_invalid_source_is_refused_whole_and_changes_nothing(runtime: Runtime) -> None:
    sid = _open(runtime)
    before = runtime.frame("local", sid).model()
    with pytest.raises(KestrelError) as err:
        runtime.submit("local", sid, "buy 10 ACME\nfly to the moon\n").model()
    assert err.value.code == "INVALID_SOURCE"
    assert err.value.detail["diagnostics"][0]["line"] == 2
    assert runtime.frame("local", sid).model() == before
    assert runtime.store.journal(sid) == []


def test_stand_down_is_persisted_and_refuses_further_submits(tmp_path: Path) -> None:
    rt = Runtime(tmp_path)
    sid = _open(rt)
    rt.submit("local", sid, "buy 10 ACME\nadvance 2").model()
    response = rt.submit("local", sid, 'stand down "enough"').model()
    assert response.disposition == "stood-down"
    assert response.stand_down is not None
    assert response.stand_down.reason == "statement"
    assert response.delivery.frame.status == "stood-down"
    assert _code(lambda: rt.submit("local", sid, "advance 1").model()) == "SESSION_STOOD_DOWN"
    rt.shutdown()
    again = Runtime(tmp_path)  # a new process: the status survives
    assert _code(lambda: again.submit("local", sid, "advance 1").model()) == "SESSION_STOOD_DOWN"
    assert again.frame("local", sid).model().frame_root == response.delivery.frame_root
    assert again.grade("local", sid).passed in (True, False)  # type: ignore[union-attr]
    again.shutdown()


def test_close_stores_record_head_and_blotter(runtime: Runtime) -> None:
    sid = _open(runtime)
    roots = [
        runtime.submit("local", sid, s).model().pentad.root for s in ("buy 5 ACME", "advance 4")
    ]
    blotter = runtime.blotter("local", sid)
    record = runtime.close("local", sid)
    assert SessionRecord.parse(record.to_json()) == record
    assert record.pentads == roots
    assert record.session == sid
    assert record.label == "1"
    assert record.scenario.id == SCENARIO
    assert runtime.artifact(record.root) == record.to_json()
    head = runtime.artifact(record.head)
    assert head["kind"] == "kestrel.frame"
    assert head["status"] == "closed"
    assert root_of(head) == record.head
    assert runtime.artifact(record.blotter_root)["kind"] == "kestrel.blotter"
    assert runtime.blotter("local", sid).orders == blotter.orders
    assert runtime.close("local", sid) == record  # idempotent
    assert runtime.frame("local", sid).model().frame_root == record.head
    assert _code(lambda: runtime.submit("local", sid, "advance 1").model()) == "SESSION_CLOSED"


def test_grade_is_stored_and_verifies_and_tampering_is_named(runtime: Runtime) -> None:
    sid = _open(runtime)
    runtime.submit("local", sid, "buy 10 ACME\nadvance 30\nsell 10 ACME\nadvance 2\n").model()
    grade = runtime.grade("local", sid)
    assert isinstance(grade, GradeResult)
    assert runtime.artifact(grade.root) == grade.to_json()
    assert runtime.grade("local", sid) == grade  # stored, same answer
    report = runtime.verify(grade)
    assert report.ok, report.mismatch
    assert report.grade == grade.root
    data = grade.to_json()
    data["metrics"]["pnl"] = "1000000.00"
    tampered = GradeResult.with_root(**data)
    bad = runtime.verify(tampered)
    assert not bad.ok
    assert bad.mismatch is not None
    assert bad.mismatch.field == "metrics.pnl"
    assert bad.mismatch.found == "1000000.00"
    assert bad.mismatch.expected == grade.metrics.pnl


def test_verify_names_a_missing_record(runtime: Runtime) -> None:
    sid = _open(runtime)
    runtime.submit("local", sid, "advance 1").model()
    grade = runtime.grade("local", sid)
    assert isinstance(grade, GradeResult)
    data = grade.to_json()
    data["record"] = "sha256:" + "0" * 64
    report = runtime.verify(GradeResult.with_root(**data))
    assert report.mismatch is not None
    assert report.mismatch.field == "record"


def test_grade_over_budget_resumes(runtime: Runtime, monkeypatch: pytest.MonkeyPatch) -> None:
    release = threading.Event()

    def slow(real: Callable[..., GradeResult]) -> Callable[..., GradeResult]:
        def held(*args: Any, **kwargs: Any) -> GradeResult:
            release.wait(10)
            return real(*args, **kwargs)

        return held

    # either way of grading (a replay, or measuring the engine the runtime holds live)
    monkeypatch.setattr(grading_module, "compute_grade", slow(compute_grade))
    monkeypatch.setattr(grading_module, "measure_grade", slow(measure_grade))
    sid = _open(runtime)
    runtime.submit("local", sid, "advance 5").model()
    first = runtime.grade("local", sid, budget=0.01)
    assert isinstance(first, OperationResumption)
    assert first.operation.startswith("op_")
    # progress counts toward the bar the session ended at (advance 5), from the start
    assert (first.progress.done, first.progress.total) == (0, 5)
    again = runtime.resume("local", first.token, budget=0.01)
    assert isinstance(again, OperationResumption)
    assert again.token == first.token
    assert again.progress.total == 5
    assert _code(lambda: runtime.resume("other", first.token)) == "UNKNOWN_OPERATION"
    assert _code(lambda: runtime.resume("local", "opt_bogus")) == "UNKNOWN_OPERATION"
    release.set()
    done = runtime.resume("local", first.token, budget=10)
    assert isinstance(done, GradeResult)
    assert runtime.artifact(done.root) == done.to_json()


def test_grade_progress_is_replayed_bars_of_the_bars_the_session_reached(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    reports: list[tuple[int, int]] = []
    real = compute_grade

    def watched(*args: Any, **kwargs: Any) -> GradeResult:
        args = (*args[:3], lambda done, total: reports.append((done, total)), *args[4:])
        return real(*args, **kwargs)

    monkeypatch.setattr(grading_module, "compute_grade", watched)
    played = Runtime(tmp_path)
    sid = _open(played)
    for source in ("advance 2", "buy 1 ACME", "advance 3"):
        played.submit("local", sid, source).model()
    played.close("local", sid)
    played.shutdown()
    runtime = Runtime(tmp_path)  # a runtime that did not hold the session replays it
    assert isinstance(runtime.grade("local", sid), GradeResult)
    runtime.shutdown()
    assert reports == [(2, 5), (2, 5), (5, 5), (5, 5)]


def test_unknown_and_corrupt_artifacts(runtime: Runtime) -> None:
    missing = "sha256:" + "9" * 64
    with pytest.raises(KestrelError) as err:
        runtime.artifact(missing)
    assert err.value.code == "UNKNOWN_ARTIFACT"
    assert err.value.detail["status"] == "missing"
    sid = _open(runtime)
    pentad_root = runtime.submit("local", sid, "advance 1").model().pentad.root
    assert runtime.artifact(pentad_root)["seq"] == 1  # served from the journal while open
    record = runtime.close("local", sid)
    conn = _sqlite(runtime)._conn
    for root in (pentad_root, record.root):
        conn.execute("UPDATE artifacts SET body = ? WHERE root = ?", (b'{"forged":true}', root))
        with pytest.raises(KestrelError) as bad:
            runtime.artifact(root)
        assert bad.value.code == "UNKNOWN_ARTIFACT"
        assert bad.value.detail["status"] == "corrupt"
        assert "corrupt" in bad.value.message


def test_a_corrupt_journal_row_is_never_served(runtime: Runtime) -> None:
    sid = _open(runtime)
    root = runtime.submit("local", sid, "advance 1").model().pentad.root
    conn = _sqlite(runtime)._conn
    conn.execute("UPDATE journal SET source = 'advance 2' WHERE pentad_root = ?", (root,))
    assert runtime.store.lookup(root) == (None, "corrupt")


def test_pentad_bytes_are_canonical_json() -> None:
    for source in ("advance 1", 'stand down "é \u2028 \x7f"\n\t\x01', 'buy 1 ACME # "q"'):
        root, body = pentad_bytes("ks_x", 3, "sha256:" + "a" * 64, source)
        data: dict[str, Any] = {
            "session": "ks_x",
            "seq": 3,
            "prev": "sha256:" + "a" * 64,
            "body": {"mediaType": "text/x-kestrel", "bytes": source},
        }
        assert body == rfc8785.dumps({**data, "root": root_of(data)})
        assert root == root_of(data)
    with pytest.raises(KestrelError) as err:
        pentad_bytes("ks_x", 1, "sha256:" + "a" * 64, "advance 1 \ud800")
    assert err.value.code == "INVALID_SOURCE"


def test_a_new_runtime_resumes_open_sessions_with_identical_roots(tmp_path: Path) -> None:
    sources = ["buy 10 ACME as a\nadvance 3", "sell 5 ACME limit 1000.00 tif gtc", "advance 7"]
    first = Runtime(tmp_path / "one")
    sid = _open(first)
    for source in sources[:2]:
        first.submit("local", sid, source).model()
    head = first.frame("local", sid).model()
    first.shutdown()
    second = Runtime(tmp_path / "one")
    assert second.resume_all() == [sid]
    assert second.frame("local", sid).model() == head
    resumed = second.submit("local", sid, sources[2]).model()
    reference = Runtime(tmp_path / "two")
    ref_sid = _open(reference)
    assert ref_sid == sid  # deterministic id: same principal, scenario and label
    for source in sources:
        expected = reference.submit("local", ref_sid, source).model()
    assert resumed.delivery.frame_root == expected.delivery.frame_root
    assert resumed.pentad.root == expected.pentad.root
    assert second.blotter("local", sid).root == reference.blotter("local", ref_sid).root
    second.shutdown()
    reference.shutdown()


class _Gate:
    def __init__(self) -> None:
        self.calls: list[tuple[str, str, Payment | None]] = []

    def check(self, principal: str, scenario: str, payment: Payment | None) -> Offer | None:
        self.calls.append((principal, scenario, payment))
        if payment is None:
            return Offer.with_root(
                offer_id="of_1",
                scenario=scenario,
                amount="1.00",
                currency="USD",
                description="one more session today",
                expires_at="2030-01-01T00:00:00Z",
                accepts=["voucher"],
            )
        if payment.voucher != "good":
            raise KestrelError("PAYMENT_INVALID", "bad voucher")
        return None


def test_the_gate_is_honoured(tmp_path: Path) -> None:
    gate = _Gate()
    rt = Runtime(tmp_path, gate=gate)
    gated = rt.open_session("alice", SCENARIO)
    assert gated.gated
    assert gated.payment is not None
    assert gated.payment.offer_id == "of_1"
    assert rt.store.sessions() == []  # nothing opened
    bad = Payment(offer_id="of_1", voucher="forged")
    assert _code(lambda: rt.open_session("alice", SCENARIO, payment=bad)) == "PAYMENT_INVALID"
    opened = rt.open_session("alice", SCENARIO, payment=Payment(offer_id="of_1", voucher="good"))
    assert not opened.gated
    assert opened.session_id is not None
    assert gate.calls[0] == ("alice", SCENARIO, None)
    # resuming an open session by label is not a new session: not gated again
    calls = len(gate.calls)
    assert rt.open_session("alice", SCENARIO, "1").session_id == opened.session_id
    assert len(gate.calls) == calls
    rt.shutdown()


def test_default_runtime_is_never_gated(runtime: Runtime) -> None:
    assert not runtime.open_session("x", SCENARIO).gated


def test_fast_frame_roots_equal_root_of(runtime: Runtime) -> None:
    sid = _open(runtime)
    sources = ["buy 10 ACME limit 1.00 tif gtc as low\nadvance 2", "buy 3 ACME\nadvance 1"]
    sources += ["cancel low\nsell 3 ACME\nadvance 3", 'stand down "bye é"']
    for source in sources:
        response = runtime.submit("local", sid, source).model()
        frame = response.delivery.frame
        assert response.delivery.frame_root == root_of(frame)
        assert SessionResponse.parse(response.to_json()) == response  # wire form is valid


def test_a_session_advanced_elsewhere_catches_up_and_is_not_forked(tmp_path: Path) -> None:
    one = Runtime(tmp_path)
    two = Runtime(tmp_path)  # another process on the same home
    sid = _open(one)
    one.submit("local", sid, "advance 1").model()
    assert two.frame("local", sid).model().frame.seq == 1
    one.submit("local", sid, "buy 1 ACME\nadvance 1").model()
    # two's engine is at seq 1: its append of seq 2 is refused by the journal's key, so
    # it replays seq 2 from the journal and applies the submission after it, as seq 3
    response = two.submit("local", sid, "advance 3").model()
    assert response.pentad.seq == 3
    assert response.pentad.prev == one.store.journal(sid)[1].frame_root
    assert [e.seq for e in two.store.journal(sid)] == [1, 2, 3]
    assert one.store.journal(sid) == two.store.journal(sid)
    three = Runtime(tmp_path)  # a fresh process replays the same three
    assert three.frame("local", sid).model().frame_root == response.delivery.frame_root
    for runtime in (one, two, three):
        runtime.shutdown()


PINNED_SOURCES = [
    "buy 10 ACME as a\nadvance 3",
    "sell 5 ACME limit 1000.00 tif gtc",
    "advance 7",
    "buy 3 ACME stop 1.00 tif day\nadvance 2",
    "cancel all\nadvance 1",
    'stand down "done é"',
]
PINNED_STEPS = [  # (pentad root, frame root) of each submission, as first shipped
    (
        "45a4837bd85ccbc755c34c7f79605d6a2d5465f27ec1ddb3d60da6b1b9d34f84",
        "580a2b6ad36b1e4d5eed0be8adf7754308ad5af4dc433fa75990f3c37356274d",
    ),
    (
        "321871ca2bdf17f7dcf7f4ca3e0e9aa997a0a8af81c27bba9abdf7a1d57f503f",
        "d794ba4dc4fd5044289527e86dd4929f85563f7b2c91ff774f5878ed10ae1f73",
    ),
    (
        "f5efc33eded185a38595a1e7ab14d29752436343c97ae196483f8a7bbf317d38",
        "e921335aed656bda96c2ab90adfd3ec2882e78b05408fbd47386ec4c2492b28b",
    ),
    (
        "a15c1c5e087f215e30f799ee27459cff27a7e036137aead61f1eac5e6ea9db0a",
        "e024b0e54fdba08cb18dd689a471e7a3a2d9f98192a1d2c0cdd3e18d248b6adb",
    ),
    (
        "085becdd8e786ebfd3a012987381c7f87666b5420e90cee2ff8f772fa73404f3",
        "3a8740375c67a35cea0434bbf9b4a381849c375758bbaed720e3541c25d3dbba",
    ),
    (
        "daac9909b703baa0f7d6d377ddcc3da1d1c546ea862e27c79318e370c25fd0e6",
        "2683e8f84a3ee792274bb55e970da7a3ae5478955f945dfb13a991a09a67275a",
    ),
]


def test_roots_of_a_fixed_session_are_pinned(tmp_path: Path) -> None:
    """Every object the service builds or stores keeps its bytes across optimisations."""
    rt = Runtime(tmp_path)
    sid = _open(rt, label="pin")
    assert sid == "ks_vj553xf5232m33epqqdz6zc624"
    for source, (pentad, frame) in zip(PINNED_SOURCES, PINNED_STEPS, strict=True):
        response = rt.submit("local", sid, source).model()
        assert (response.pentad.root, response.delivery.frame_root) == (
            f"sha256:{pentad}",
            f"sha256:{frame}",
        )
        assert root_of(response.pentad) == response.pentad.root
        stored = rt.artifact(response.pentad.root)  # served while the session is open
        assert Pentad.parse(stored) == response.pentad
    assert response.disposition == "stood-down"
    rt.shutdown()
    rt = Runtime(tmp_path)  # a new process replays the journal
    record = rt.close("local", sid)
    assert record.root == "sha256:ee02692416a3dbc79f65b5bc168969f2b55a7de01e2b082925b06d0834d91502"
    assert record.head == "sha256:f20ad5b157b448823a8a2f536a11c5632d50281b6c57ff4d7d429c365bfdaaa8"
    assert (
        record.blotter_root
        == "sha256:76cb0e036aec1b37cbe84f173fce7aedf452e5d071cfac6ab27f792d9c0d2508"
    )
    assert record.pentads == [f"sha256:{pentad}" for pentad, _ in PINNED_STEPS]
    for root in record.pentads:
        assert root_of(rt.artifact(root)) == root
    grade = rt.grade("local", sid)
    assert isinstance(grade, GradeResult)
    assert grade.root == "sha256:a208f0bd4e7ee71b7ed906a286cdb21f6e1888ee1f172ea33845bea3a5def76c"
    assert rt.verify(grade).ok
    rt.shutdown()


def test_frame_serves_the_head_with_its_root_open_and_closed(tmp_path: Path) -> None:
    rt = Runtime(tmp_path)
    sid = _open(rt)
    response = rt.submit(
        "local", sid, "buy 10 ACME limit 1.00 tif gtc\nbuy 2 ACME\nadvance 3"
    ).model()
    head = rt.frame("local", sid).model()
    assert head == response.delivery
    assert head.frame_root == root_of(head.frame)
    assert Delivery.parse(head.to_json()) == head  # its wire form verifies
    record = rt.close("local", sid)
    rt.shutdown()
    rt = Runtime(tmp_path)  # a closed session is served from its artifacts
    closed = rt.frame("local", sid).model()
    assert closed.frame.status == "closed"
    assert closed.frame_root == record.head == root_of(closed.frame)
    assert Delivery.parse(closed.to_json()) == closed
    rt.shutdown()


def _graded(tmp_path: Path, name: str, tamper: Callable[[Any, str], None] | None) -> str:
    rt = Runtime(tmp_path / name)
    sid = _open(rt, label="g")
    for source in PINNED_SOURCES[:5]:
        rt.submit("local", sid, source).model()
    record = rt.close("local", sid)
    if tamper is not None:
        tamper(_sqlite(rt)._conn, record.pentads[2])
    rt.shutdown()
    rt = Runtime(tmp_path / name)  # not held live: its grade replays the pentads it reads
    try:
        grade = rt.grade("local", sid)
        assert isinstance(grade, GradeResult)
        return grade.root
    finally:
        rt.shutdown()


def test_grade_reads_pentads_from_the_journal_or_else_the_artifacts(tmp_path: Path) -> None:
    def journal(conn: Any, root: str) -> None:
        conn.execute("UPDATE journal SET source = 'advance 2' WHERE pentad_root = ?", (root,))

    def artifact(conn: Any, root: str) -> None:
        conn.execute("UPDATE artifacts SET body = ? WHERE root = ?", (b'{"x":1}', root))

    def both(conn: Any, root: str) -> None:
        journal(conn, root)
        artifact(conn, root)

    expected = _graded(tmp_path, "clean", None)
    assert _graded(tmp_path, "artifact", artifact) == expected  # the journal still holds
    assert _graded(tmp_path, "journal", journal) == expected  # the artifacts still hold
    with pytest.raises(KestrelError) as err:
        _graded(tmp_path, "both", both)
    assert err.value.code == "UNKNOWN_ARTIFACT"
    assert err.value.detail["status"] == "corrupt"
