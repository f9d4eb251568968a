"""Scenario and session checks: K201-K205 at the token they reject."""

from __future__ import annotations

import pytest
from kestrel_sdk.runtime.lang import SessionContext, validate_source

from tests.kestrel_sdk.runtime.engine.tapes import daily

SCENARIO = daily(
    [("100", "101", "99", "100")] * 5,
    tick="0.05",
    lot=10,
)
TIMES = SCENARIO.tape.times  # 2024-01-01 … 2024-01-05, midnight UTC
SESSION = SessionContext(orders=2, aliases=frozenset({"entry"}), clock=1, times=TIMES)

SCENARIO_CASES = [
    ("buy 10 XYZ", 1, 8, "K201"),
    ("advance\ncancel all XYZ", 2, 12, "K201"),
    ("buy 10 ACME limit 100.03", 1, 19, "K202"),
    ("buy 10 ACME stop 100.05 limit 100.07", 1, 31, "K202"),
    ("buy 10 ACME stop 100.03", 1, 18, "K202"),
    # a market order's only price is its bracket's or its trail: each on the tick grid too
    ("buy 10 ACME take 100.07", 1, 18, "K202"),
    ("sell 10 ACME loss 100.07", 1, 19, "K202"),
    ("buy 10 ACME trail 0.07", 1, 19, "K202"),
    ("sell 15 ACME", 1, 6, "K203"),
]


@pytest.mark.parametrize(("source", "line", "column", "code"), SCENARIO_CASES)
def test_scenario_checks(source: str, line: int, column: int, code: str) -> None:
    report = validate_source(source, SCENARIO)
    assert [(d.line, d.column, d.code) for d in report.diagnostics] == [(line, column, code)]
    assert not report.ok


def test_scenario_checks_need_a_scenario() -> None:
    assert validate_source("buy 15 XYZ limit 1.03").ok


SESSION_CASES = [
    ("cancel o3", 1, 8, "K204"),
    ("cancel exit", 1, 8, "K204"),
    ("cancel o02", 1, 8, "K204"),
    ("cancel later\nbuy 10 ACME as later", 1, 8, "K204"),
    ("buy 10 ACME as entry", 1, 16, "K105"),
    ("advance to 2024-01-02T00:00:00Z", 1, 12, "K205"),
    ("advance to 2024-01-01T12:00:00Z", 1, 12, "K205"),
    ("advance to 2024-01-05T00:00:01Z", 1, 12, "K205"),
    ("advance 2\nadvance to 2024-01-04T00:00:00Z", 2, 12, "K205"),
    ("advance\nadvance to 2024-01-02T12:00:00Z", 2, 12, "K205"),  # the clock is at bar 2
    ("advance to 2024-01-03T00:00:00Z\nadvance to 2024-01-03T00:00:00Z", 2, 12, "K205"),
    ("buy 10 ACME\ncancel o4", 2, 8, "K204"),  # the buy is o3
]


@pytest.mark.parametrize(("source", "line", "column", "code"), SESSION_CASES)
def test_session_checks(source: str, line: int, column: int, code: str) -> None:
    report = validate_source(source, SCENARIO, SESSION)
    assert [(d.line, d.column, d.code) for d in report.diagnostics] == [(line, column, code)]


def test_references_defined_earlier_in_the_source_are_known() -> None:
    source = "buy 10 ACME as exit\ncancel exit\nbuy 10 ACME\ncancel o4\ncancel o1\ncancel entry"
    assert validate_source(source, SCENARIO, SESSION).ok


def test_advance_to_inside_the_tape_is_fine() -> None:
    assert validate_source("advance to 2024-01-05T00:00:00Z", SCENARIO, SESSION).ok
    assert validate_source("advance to 2024-01-03T06:00:00Z", SCENARIO, SESSION).ok


def test_the_projected_clock_allows_what_follows_it() -> None:
    for source in (
        "advance\nadvance to 2024-01-04T00:00:00Z",
        "advance to 2024-01-03T00:00:00Z\nadvance to 2024-01-04T00:00:00Z",
        "buy 10 ACME\ncancel o3",
    ):
        assert validate_source(source, SCENARIO, SESSION).ok, source


def test_scenario_and_syntax_diagnostics_come_in_line_order() -> None:
    report = validate_source("buy 10 XYZ\nfly", SCENARIO)
    assert [(d.line, d.code) for d in report.diagnostics] == [(1, "K201"), (2, "K100")]


@pytest.mark.parametrize(
    "source",
    ["advance to 2024-01-05T00:00:01Z", "advance 2\nadvance to 2024-01-06T00:00:00Z"],
)
def test_an_advance_beyond_the_tape_names_no_later_bar_nor_the_bars_left(source: str) -> None:
    """K205 beyond the tape names neither the last bar's time nor the bars left after the
    clock (either would tell of bars the clock has not reached)."""
    report = validate_source(source, SCENARIO, SESSION)
    [found] = report.diagnostics
    assert found.code == "K205"
    assert found.message.endswith(": beyond the tape's last bar")
    assert "2024-01-05" not in found.message.removeprefix(source.splitlines()[-1])


def test_an_advance_to_behind_a_projected_clock_names_no_later_bar() -> None:
    """``advance 2`` then ``advance to`` a time it passed: refused without naming the
    projected clock's time (bar 3, after the session's clock at bar 1)."""
    source = "advance 2\nadvance to 2024-01-02T00:00:00Z"
    [found] = validate_source(source, SCENARIO, SESSION).diagnostics
    assert found.code == "K205"
    assert found.message.endswith("not after the clock the advances before it reach")
    assert "2024-01-04" not in found.message


def test_an_advance_to_behind_the_session_clock_names_it() -> None:
    [found] = validate_source("advance to 2024-01-01T00:00:00Z", SCENARIO, SESSION).diagnostics
    assert found.message.endswith("not after the clock (2024-01-02T00:00:00Z)")
