"""The grade's ``no-lookahead`` check, from the reads the runtime saw."""

from __future__ import annotations

from pathlib import Path

import pytest
from kestrel_protocol import GradeResult, KestrelError
from kestrel_sdk.runtime import Runtime

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
    assert detail.startswith("the session's principal read tape acme-trend after submission 1")
    assert "(clock bar 3)" in detail
    assert "1 more such read" in detail
    assert isinstance(grade, GradeResult)
    assert not grade.passed
    assert rt.verify(grade).ok  # the reads are in the record: the grade verifies
    rt.shutdown()


def test_reads_outside_open_and_close_or_by_others_do_not_count(tmp_path: Path) -> None:
    rt = Runtime(tmp_path)
    rt.tape("alice", SCENARIO)  # before the open
    sid = _open(rt)
    rt.tape("bob", SCENARIO)  # another principal
    rt.tape("alice", "acme-chop")  # another scenario
    rt.submit("alice", sid, "advance 2")
    passed, detail = _check(rt.grade("alice", sid))
    rt.tape("alice", SCENARIO)  # after the close
    assert passed
    assert "read no bar after the clock" in detail
    assert "not sealed" in detail
    assert _check(rt.grade("alice", sid)) == (passed, detail)  # the stored grade stands
    rt.shutdown()


def test_reads_survive_a_restart(tmp_path: Path) -> None:
    rt = Runtime(tmp_path)
    sid = _open(rt)
    rt.submit("alice", sid, "advance 4")
    rt.tape("alice", SCENARIO)
    rt.shutdown()
    again = Runtime(tmp_path)
    passed, detail = _check(again.grade("alice", sid))
    assert not passed
    assert "after submission 1 (clock bar 4)" in detail
    again.shutdown()


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
