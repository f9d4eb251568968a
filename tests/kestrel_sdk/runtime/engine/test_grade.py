"""Grading (docs/spec.md §6): replay from pentads, metrics exactly, conformance checks."""

from __future__ import annotations

from decimal import Decimal, localcontext
from typing import Any

from kestrel_protocol import GradeResult, Pentad, SessionRecord, canonical_json, root_of
from kestrel_sdk.runtime.catalog.model import LoadedScenario
from kestrel_sdk.runtime.engine import SessionEngine, compute_grade

from tests.kestrel_sdk.runtime.engine.replay import run_session
from tests.kestrel_sdk.runtime.engine.tapes import daily, two_symbols_peak_then_crash

FLAT = ("100", "100", "100", "100")
ROWS = [FLAT, ("100", "110", "100", "110"), ("110", "110", "99", "99"), FLAT]


def checks(grade: GradeResult) -> dict[str, bool]:
    return {c.id: c.passed for c in grade.conformance.checks}


def test_metrics_by_hand() -> None:
    loaded = daily(ROWS, cash="10000.00", bps="10")
    _, pentads, record = run_session(loaded, ["buy 10 ACME\nadvance 2", "stand down"])
    grade = compute_grade(loaded, record, pentads)
    # equity: 10000 → 8999 + 1100 = 10099 → 8999 + 990 − 0.99 (liquidation fee) = 9988.01
    m = grade.metrics
    assert (m.pnl, m.return_, m.fills, m.fees) == ("-11.99", "-0.00119900", 2, "1.99")
    assert m.max_drawdown == "0.01099020"  # (10099 − 9988.01) / 10099
    assert m.exposure == "1.00000000"  # both processed bars closed holding
    assert m.turnover == "0.19900000"  # (1000 + 990) / 10000
    with localcontext() as ctx:
        ctx.prec = 50
        r1 = Decimal(99) / Decimal(10000)
        r2 = Decimal("-110.99") / Decimal("10099")
        mean = (r1 + r2) / 2
        stdev = (((r1 - mean) ** 2 + (r2 - mean) ** 2) / 1).sqrt()
        expected = (mean / stdev * Decimal(252).sqrt()).quantize(Decimal("1E-8"))
    assert m.sharpe == str(expected)
    assert grade.passed
    assert all(checks(grade).values())
    assert grade.record == record.root
    assert grade.head == record.head
    assert GradeResult.parse(grade.to_json()).root == grade.root


def test_sharpe_is_zero_with_fewer_than_two_returns_or_no_variance() -> None:
    loaded = daily([FLAT] * 5)
    _, pentads, record = run_session(loaded, ["advance"])
    assert compute_grade(loaded, record, pentads).metrics.sharpe == "0.00000000"
    _, pentads, record = run_session(loaded, ["advance 3"])
    grade = compute_grade(loaded, record, pentads)
    assert grade.metrics.sharpe == "0.00000000"
    assert grade.metrics.exposure == "0.00000000"


def test_not_flat_at_end_fails_the_grade() -> None:
    loaded = daily([FLAT] * 5)
    _, pentads, record = run_session(loaded, ["buy 1 ACME\nadvance"])
    grade = compute_grade(loaded, record, pentads)
    assert checks(grade)["flat-at-end"] is False
    assert "1 ACME" in next(c.detail for c in grade.conformance.checks if c.id == "flat-at-end")
    assert not grade.passed


def test_a_trade_still_open_at_the_end_is_marked_at_the_last_close() -> None:
    # a tick finer than the tape's cents: the engine's prices are the tape's × 100
    loaded = daily(ROWS, cash="10000.00", bps="10", tick="0.0001")
    _, pentads, record = run_session(loaded, ["buy 10 ACME\nadvance 2"])
    m = compute_grade(loaded, record, pentads).metrics
    # bought 10 at 100 (fee 1.00), still held at bar 2's close, 99: (990 − 1000 − 1) / 1000
    assert (m.trades, m.pnl, m.win_rate) == (1, "-11.00", "0.00000000")
    assert m.best_trade == m.worst_trade == m.avg_trade == m.expectancy == "-0.01100000"


def test_statements_cut_off_by_the_end_of_the_tape_fail_the_check() -> None:
    loaded = daily([FLAT] * 3)
    _, pentads, record = run_session(loaded, ["advance 9\nbuy 1 ACME"])
    grade = compute_grade(loaded, record, pentads)
    assert checks(grade)["no-statement-after-stand-down"] is False
    assert checks(grade)["chain-intact"] is True


def test_a_broken_prev_breaks_the_chain() -> None:
    loaded = daily([FLAT] * 5)
    _, pentads, record = run_session(loaded, ["advance", "advance"])
    forged = Pentad.with_root(**{**pentads[1].to_json(), "prev": pentads[0].prev})
    record = SessionRecord.with_root(
        **{**record.to_json(), "pentads": [pentads[0].root, forged.root]}
    )
    grade = compute_grade(loaded, record, [pentads[0], forged])
    assert checks(grade)["chain-intact"] is False
    assert "pentad 2" in grade.conformance.checks[0].detail
    assert not grade.passed


def test_a_wrong_head_breaks_the_chain() -> None:
    loaded = daily([FLAT] * 5)
    _, pentads, record = run_session(loaded, ["advance"])
    _, _, other = run_session(loaded, ["advance 2"])
    record = SessionRecord.with_root(**{**record.to_json(), "head": other.head})
    assert checks(compute_grade(loaded, record, pentads))["chain-intact"] is False


def test_position_limit_check_reports_the_largest_position() -> None:
    loaded = daily([FLAT] * 5, max_position=50)
    _, pentads, record = run_session(loaded, ["buy 20 ACME\nadvance\nsell 20 ACME\nadvance"])
    grade = compute_grade(loaded, record, pentads)
    detail = next(c.detail for c in grade.conformance.checks if c.id == "within-position-limits")
    assert checks(grade)["within-position-limits"] is True
    assert "20" in detail


def test_progress_is_reported_and_grades_are_deterministic() -> None:
    loaded = daily([FLAT] * 8, bps="10")
    sources = ["buy 5 ACME\nadvance 3", "sell 5 ACME\nadvance 2", "stand down"]
    _, pentads, record = run_session(loaded, sources)
    seen: list[tuple[int, int]] = []
    first = compute_grade(loaded, record, pentads, lambda done, total: seen.append((done, total)))
    second = compute_grade(loaded, record, pentads)
    assert canonical_json(first) == canonical_json(second)
    assert seen[-1] == (7, 7)
    assert [done for done, _ in seen] == sorted(done for done, _ in seen)


def test_exposure_counts_every_bar_held_up_to_a_max_drawdown_with_two_symbols() -> None:
    # Spec §6: exposure is the fraction of processed bars (1, 2, 3) that closed holding;
    # the stand-down bar closed holding before its liquidation.
    loaded = two_symbols_peak_then_crash()
    _, pentads, record = run_session(loaded, ["buy 500 AAA\nbuy 400 BBB\nadvance 3"])
    m = compute_grade(loaded, record, pentads).metrics
    assert (m.exposure, m.max_drawdown) == ("1.00000000", "0.24770642")


def check_of(grade: GradeResult, check_id: str) -> tuple[bool, str]:
    found = next(c for c in grade.conformance.checks if c.id == check_id)
    return found.passed, found.detail


def with_lookahead(
    record: SessionRecord, sealed: bool, reads: list[dict[str, Any]]
) -> SessionRecord:
    return SessionRecord.with_root(
        **{**record.to_json(), "lookahead": {"sealed": sealed, "reads": reads}}
    )


def test_no_lookahead_names_the_first_event_and_counts_the_others() -> None:
    # The check is computed from the record's lookahead alone: a submission made behind
    # the principal's horizon fails it (sealed or not), and the grade with it.
    loaded = daily([FLAT] * 5)
    _, pentads, record = run_session(loaded, ["advance", "advance"])
    first = {"seq": 1, "bar": 0, "read": "tape test read"}
    second = {"seq": 2, "bar": 1, "read": "session ks_x of the same principal had reached bar 4"}
    prefix = (
        "tape test read before submission 1 at bar 0: the principal had been shown bars "
        "after the session's clock"
    )
    for sealed, reads, detail in (
        (False, [first, second], f"{prefix}; 1 more such event(s)"),
        (True, [first], prefix),
    ):
        grade = compute_grade(loaded, with_lookahead(record, sealed, reads), pentads)
        assert check_of(grade, "no-lookahead") == (False, detail)
        assert not grade.passed


def test_no_lookahead_passes_sealed_or_with_no_read_seen_and_says_which() -> None:
    loaded = daily([FLAT] * 5)
    _, pentads, record = run_session(loaded, ["advance"])
    sealed = compute_grade(loaded, with_lookahead(record, True, []), pentads)
    passed, detail = check_of(sealed, "no-lookahead")
    assert passed
    assert detail.startswith("the scenario was sealed for the whole session")
    assert sealed.passed
    unsealed = compute_grade(loaded, record, pentads)
    passed, detail = check_of(unsealed, "no-lookahead")
    assert passed
    assert detail.startswith("the session's principal read no bar after the clock")
    assert unsealed.passed


def test_a_record_of_another_scenario_breaks_the_chain_and_says_so() -> None:
    loaded = daily([FLAT] * 5)
    other = daily([FLAT] * 6)  # same id, another tape: another root
    _, pentads, record = run_session(loaded, ["advance"])
    passed, detail = check_of(compute_grade(other, record, pentads), "chain-intact")
    assert not passed
    assert detail == (
        f"record is for scenario test {loaded.scenario.root}, graded on test {other.scenario.root}"
    )


def test_missing_reordered_or_forged_pentads_break_the_chain_and_say_which() -> None:
    loaded = daily([FLAT] * 5)
    _, pentads, record = run_session(loaded, ["advance", "advance"])
    p1, p2 = pentads
    passed, detail = check_of(compute_grade(loaded, record, [p1]), "chain-intact")
    assert (passed, detail) == (False, "record lists 2 pentads, 1 were given")
    passed, detail = check_of(compute_grade(loaded, record, [p2, p1]), "chain-intact")
    assert (passed, detail) == (False, f"pentad 1 is {p2.root}, the record lists {p1.root}")
    # A pentad of another session, listed by the record: its root matches, its session not.
    forged = Pentad.with_root(**{**p1.to_json(), "session": "ks_other"})
    listed = SessionRecord.with_root(**{**record.to_json(), "pentads": [forged.root, p2.root]})
    passed, detail = check_of(compute_grade(loaded, listed, [forged, p2]), "chain-intact")
    assert (passed, detail) == (False, "pentad 1 names session ks_other seq 1")


def test_submissions_after_a_stand_down_fail_the_replay_and_are_counted() -> None:
    loaded = daily([FLAT] * 5)
    _, pentads, record = run_session(loaded, ["stand down"])
    stood = SessionEngine(loaded, "ks_test")
    stood.submit("stand down")
    late = [
        Pentad.with_root(
            session="ks_test",
            seq=seq,
            prev=root_of(stood.frame()),
            body={"media_type": "text/x-kestrel", "bytes": "advance"},
        )
        for seq in (2, 3)
    ]
    pentads = [*pentads, *late]
    record = SessionRecord.with_root(**{**record.to_json(), "pentads": [p.root for p in pentads]})
    grade = compute_grade(loaded, record, pentads)
    passed, detail = check_of(grade, "chain-intact")
    assert not passed
    assert detail.startswith("pentad 2 does not replay: SESSION_STOOD_DOWN: ")
    assert check_of(grade, "no-statement-after-stand-down") == (
        False,
        "0 statement(s) after the stand-down in its source were not applied;"
        " 2 submission(s) came after it",
    )


def test_a_pentad_the_session_refuses_otherwise_breaks_only_the_chain() -> None:
    loaded = daily([FLAT] * 5)
    _, pentads, record = run_session(loaded, ["advance"])
    after = SessionEngine(loaded, "ks_test")
    after.submit("advance")
    bad = Pentad.with_root(
        session="ks_test",
        seq=2,
        prev=root_of(after.frame()),
        body={"media_type": "text/x-kestrel", "bytes": "buy 1 NOPE"},
    )
    record = SessionRecord.with_root(**{**record.to_json(), "pentads": [pentads[0].root, bad.root]})
    grade = compute_grade(loaded, record, [pentads[0], bad])
    passed, detail = check_of(grade, "chain-intact")
    assert not passed
    assert detail.startswith("pentad 2 does not replay: INVALID_SOURCE: ")
    assert check_of(grade, "no-statement-after-stand-down") == (
        True,
        "nothing was sent after the session stood down",
    )


def test_statements_cut_off_in_the_source_are_counted_in_the_detail() -> None:
    loaded = daily([FLAT] * 3)
    _, pentads, record = run_session(loaded, ["advance 9\nbuy 1 ACME\nadvance"])
    assert check_of(compute_grade(loaded, record, pentads), "no-statement-after-stand-down") == (
        False,
        "2 statement(s) after the stand-down in its source were not applied;"
        " 0 submission(s) came after it",
    )


def test_position_limits_check_measures_the_largest_long_or_short_position() -> None:
    # Spec §6 within-position-limits: |position| up to max_position is within, exactly at
    # it too; on a shortable account a short position counts by its size.
    loaded = daily([FLAT] * 6, max_position=50, shortable=True)
    sources = ["buy 50 ACME\nadvance", "sell 80 ACME\nadvance", "buy 30 ACME\nadvance"]
    _, pentads, record = run_session(loaded, sources)
    grade = compute_grade(loaded, record, pentads)
    assert check_of(grade, "within-position-limits") == (
        True,
        "largest |position| 50 of max_position 50",
    )
    _, pentads, record = run_session(loaded, ["sell 30 ACME\nadvance", "buy 30 ACME\nadvance"])
    grade = compute_grade(loaded, record, pentads)
    assert check_of(grade, "within-position-limits") == (
        True,
        "largest |position| 30 of max_position 50",
    )


def progress_of(
    loaded: LoadedScenario, record: SessionRecord, pentads: list[Pentad], bars: int | None = None
) -> list[tuple[int, int]]:
    seen: list[tuple[int, int]] = []
    compute_grade(loaded, record, pentads, lambda done, total: seen.append((done, total)), bars)
    return seen


def test_progress_counts_the_replayed_clock_against_the_bars_asked_for() -> None:
    loaded = daily([FLAT] * 8)
    sources = ["buy 5 ACME\nadvance 3", "sell 5 ACME\nadvance 2", "stand down"]
    _, pentads, record = run_session(loaded, sources)
    for bars, expected in (
        (None, [(3, 7), (5, 7), (5, 7), (7, 7)]),
        (5, [(3, 5), (5, 5), (5, 5), (5, 5)]),
    ):
        assert progress_of(loaded, record, pentads, bars) == expected
    # A two-bar tape has one bar to replay: the total is 1, never 0.
    short = daily([FLAT] * 2)
    _, pentads, record = run_session(short, ["advance"])
    assert progress_of(short, record, pentads) == [(1, 1), (1, 1)]


def test_a_return_from_zero_equity_counts_as_zero_in_the_sharpe() -> None:
    # Spec §6: r is the per-bar simple return; equity 0 has none (0 counts, not a
    # division by zero). A one-cent short: equity 0.01, 0.01, 0.00, 0.01.
    cent, two = ("0.01",) * 4, ("0.02",) * 4
    loaded = daily([cent, cent, two, cent], cash="0.01", shortable=True, max_drawdown="1.0")
    _, pentads, record = run_session(loaded, ["sell 1 ACME\nadvance 3"])
    m = compute_grade(loaded, record, pentads).metrics
    with localcontext() as ctx:
        ctx.prec = 50
        returns = [Decimal(0), Decimal(-1), Decimal(0)]
        mean = sum(returns, Decimal(0)) / 3
        stdev = (sum(((r - mean) ** 2 for r in returns), Decimal(0)) / 2).sqrt()
        expected = (mean / stdev * Decimal(252).sqrt()).quantize(Decimal("1E-8"))
    assert (m.sharpe, m.max_drawdown, m.pnl) == (str(expected), "1.00000000", "0.00")
    assert m.buy_and_hold == "0.00000000"  # a one-cent close at bar 0 is a price like any


def test_a_grade_with_no_bar_processed_has_zero_exposure() -> None:
    # Spec §6: exposure is a fraction of the processed bars; with none it is 0.
    loaded = daily([FLAT] * 3)
    _, pentads, record = run_session(loaded, ["buy 1 ACME"])  # placed, never processed
    grade = compute_grade(loaded, record, pentads)
    m = grade.metrics
    assert (m.exposure, m.pnl, m.fills, m.sharpe) == ("0.00000000", "0.00", 0, "0.00000000")
    assert check_of(grade, "within-position-limits") == (
        True,
        "largest |position| 0 of max_position 100000",
    )
