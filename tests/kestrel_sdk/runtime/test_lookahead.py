"""The grade's ``no-lookahead`` check, from the principal's horizon the runtime kept."""

from __future__ import annotations

from pathlib import Path

import pytest
from kestrel_protocol import GradeResult, KestrelError
from kestrel_sdk.runtime import Runtime
from kestrel_sdk.runtime.stores import open_runtime_store

SCENARIO = "acme-trend"


def _check(grade: GradeResult | object) -> tuple[bool, str]:
    assert isinstance(grade, GradeResult)
    found = next(c for c in grade.conformance.checks if c.id == "no-lookahead")
    return found.passed, found.detail


def _open(rt: Runtime, principal: str = "alice", label: str | None = None) -> str:
    sid = rt.open_session(principal, SCENARIO, label).session_id
    assert sid is not None
    return sid


def test_reading_the_tape_while_trading_fails_and_names_the_read(tmp_path: Path) -> None:
    rt = Runtime(tmp_path)
    sid = _open(rt)
    rt.submit("alice", sid, "buy 1 ACME\nadvance 3")
    rt.tape("alice", SCENARIO)
    rt.submit("alice", sid, "sell 1 ACME\nadvance 2")
    rt.tape("alice", SCENARIO)
    grade = rt.grade("alice", sid)
    passed, detail = _check(grade)
    assert not passed
    assert detail.startswith("tape acme-trend read before submission 2 at bar 3")
    assert isinstance(grade, GradeResult)
    assert not grade.passed
    assert rt.verify(grade).ok  # the reads are in the record: the grade verifies
    rt.shutdown()


def test_reads_by_others_of_other_scenarios_or_after_the_last_submission_do_not_count(
    tmp_path: Path,
) -> None:
    rt = Runtime(tmp_path)
    sid = _open(rt)
    rt.tape("bob", SCENARIO)  # another principal
    rt.tape("alice", "acme-chop")  # another scenario
    rt.submit("alice", sid, "advance 2")
    rt.tape("alice", SCENARIO)  # after the last submission: no decision came after it
    passed, detail = _check(rt.grade("alice", sid))
    rt.tape("alice", SCENARIO)  # after the close
    assert passed
    assert "read no bar after the clock" in detail
    assert "not sealed" in detail
    assert _check(rt.grade("alice", sid)) == (passed, detail)  # the stored grade stands
    rt.shutdown()


def test_a_read_before_the_open_counts(tmp_path: Path) -> None:
    rt = Runtime(tmp_path)
    rt.tape("alice", SCENARIO)  # before the session exists
    sid = _open(rt)
    rt.submit("alice", sid, "advance 2")
    passed, detail = _check(rt.grade("alice", sid))
    assert not passed
    assert detail.startswith("tape acme-trend read before submission 1 at bar 0")
    rt.shutdown()


def test_reads_survive_a_restart(tmp_path: Path) -> None:
    rt = Runtime(tmp_path)
    sid = _open(rt)
    rt.submit("alice", sid, "advance 4")
    rt.tape("alice", SCENARIO)
    rt.shutdown()
    again = Runtime(tmp_path)
    again.submit("alice", sid, "advance 1")
    passed, detail = _check(again.grade("alice", sid))
    assert not passed
    assert detail.startswith("tape acme-trend read before submission 2 at bar 4")
    again.shutdown()


def test_a_scout_in_another_process_fails_the_session_behind_it(tmp_path: Path) -> None:
    """Two runtimes on one home (two processes' worth): the scout runs ahead in one, the
    trading session submits in the other and fails naming the scout. The scout, opened
    when the trading session had shown bar 3, was itself behind at its first submission."""
    trading_side = Runtime(tmp_path, sealed=[SCENARIO])
    scouting_side = Runtime(tmp_path, sealed=[SCENARIO])
    trader = _open(trading_side, label="trade")
    trading_side.submit("alice", trader, "advance 3")
    scout = _open(scouting_side, label="scout")
    scouting_side.submit("alice", scout, "advance 10")
    scouting_side.submit("alice", scout, "advance 2000")
    trading_side.submit("alice", trader, "buy 10 ACME\nadvance 1")
    passed, detail = _check(trading_side.grade("alice", trader))
    assert not passed
    assert detail.startswith(
        f"session {scout} of the same principal had reached bar 2010 before submission 2 at bar 3"
    )
    scouted = _check(scouting_side.grade("alice", scout))
    assert scouted == (False, scouted[1])
    assert scouted[1].startswith(f"session {trader} of the same principal had reached bar 3 ")
    trading_side.shutdown()
    scouting_side.shutdown()


def test_a_scout_run_before_the_trading_session_opened_counts(tmp_path: Path) -> None:
    """The scout runs alone (one session: nothing written per step), is graded, then the
    trading session opens: its first submission is behind the scout's clock."""
    rt = Runtime(tmp_path)
    scout = _open(rt)
    rt.submit("alice", scout, "advance 2519")
    assert _check(rt.grade("alice", scout))[0]
    trader = _open(rt)
    rt.submit("alice", trader, "buy 10 ACME\nadvance 1")
    passed, detail = _check(rt.grade("alice", trader))
    assert not passed
    assert detail.startswith(
        f"session {scout} of the same principal had reached bar 2519 before submission 1 at bar 0"
    )
    other = rt.open_session("bob", SCENARIO).session_id  # another principal: not behind
    assert other is not None
    rt.submit("bob", other, "advance 1")
    assert _check(rt.grade("bob", other))[0]
    rt.shutdown()


def test_a_session_sealed_throughout_passes_and_says_so(tmp_path: Path) -> None:
    rt = Runtime(tmp_path, sealed=[SCENARIO])
    sid = _open(rt)
    rt.submit("alice", sid, "advance 2")
    with pytest.raises(KestrelError) as caught:
        rt.tape("alice", SCENARIO)
    assert caught.value.code == "SCENARIO_SEALED"
    passed, detail = _check(rt.grade("alice", sid))
    assert passed
    assert "sealed for the whole session" in detail
    rt.shutdown()


def test_a_seal_lifted_during_the_session_is_not_sealed_throughout(tmp_path: Path) -> None:
    rt = Runtime(tmp_path, sealed=[SCENARIO])
    sid = _open(rt)
    rt.submit("alice", sid, "advance 2")
    rt.shutdown()
    unsealed = Runtime(tmp_path)  # a new process without the seal serves the session
    unsealed.submit("alice", sid, "advance 1")
    passed, detail = _check(unsealed.grade("alice", sid))
    assert passed
    assert "not sealed" in detail
    unsealed.shutdown()


def test_a_tape_read_at_the_last_bar_holds_no_future(tmp_path: Path) -> None:
    rt = Runtime(tmp_path)
    sid = _open(rt)
    rt.submit("alice", sid, "advance 100000")  # stands down at the end of the tape
    rt.tape("alice", SCENARIO)
    passed, _ = _check(rt.grade("alice", sid))
    assert passed
    rt.shutdown()


@pytest.mark.parametrize("store", ["memory:", None])
def test_a_discarded_session_still_shows_its_reach_to_its_principals_later_sessions(
    tmp_path: Path, store: str | None
) -> None:
    rt = Runtime(tmp_path, store=open_runtime_store(store, tmp_path))
    first = _open(rt)
    rt.submit("alice", first, "buy 1 ACME\nadvance 30")
    assert not rt.discard("alice", first)  # open: kept as it is
    grade = rt.grade("alice", first)
    assert isinstance(grade, GradeResult)
    assert not rt.discard("bob", first)  # another principal's: kept as it is
    assert rt.frame("alice", first).model().frame.clock.bar == 30
    assert rt.discard("alice", first)
    with pytest.raises(KestrelError) as gone:  # forgotten: a clear refusal, on every read
        rt.frame("alice", first)
    assert gone.value.code == "UNKNOWN_SESSION"
    assert rt.store.lookup(grade.root)[1] == "missing"
    second = _open(rt)  # the store no longer holds the first: its reach is in the horizon
    rt.submit("alice", second, "advance 5")
    passed, detail = _check(rt.grade("alice", second))
    assert not passed
    assert detail.startswith(f"session {first} of the same principal had reached bar 30")
    rt.shutdown()
