"""Grading (spec §6): replay from pentads, metrics exactly, conformance checks."""

from __future__ import annotations

from decimal import Decimal, localcontext

from kestrel_protocol import GradeResult, Pentad, SessionRecord, canonical_json
from kestrel_sdk.runtime.engine import compute_grade

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
