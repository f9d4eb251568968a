"""The conformance gate itself: it fails on what it must fail on (no Node needed)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conformance.expectations import (
    Expectation,
    Suite,
    compare,
    load_suites,
    read_outcomes,
    table,
)

SUITE = Suite(
    "9.9.9",
    ("--suite", "all"),
    {
        "tools-list": Expectation("pass"),
        "server-stateless": Expectation(
            "pass", "needs diagnostic tools", frozenset({"needs-fixture"})
        ),
        "prompts-list": Expectation("pending", "prompts not implemented yet"),
        "tools-call-simple-text": Expectation("not-applicable", "needs test_simple_text"),
    },
)


def _check(check_id: str, status: str, message: str = "") -> dict[str, Any]:
    return {"id": check_id, "status": status, "description": check_id, "errorMessage": message}


def _write(out: Path, scenario: str, *checks: dict[str, Any]) -> None:
    run = out / f"server-{scenario}-2026-11-30T20-18-56-083Z"
    run.mkdir(parents=True, exist_ok=True)
    (run / "checks.json").write_text(json.dumps(list(checks)))


def _all_as_expected(out: Path) -> None:
    _write(out, "tools-list", _check("tools-list", "SUCCESS"))
    _write(
        out,
        "server-stateless",
        _check("discover", "SUCCESS"),
        _check("needs-fixture", "FAILURE", "Not testable: no diagnostic tool"),
    )
    _write(out, "prompts-list", _check("prompts-list", "FAILURE", "Method not found"))
    _write(out, "tools-call-simple-text", _check("call", "FAILURE", "unknown tool"))


def test_results_as_expected_pass_the_gate(tmp_path: Path) -> None:
    _all_as_expected(tmp_path)
    outcomes = read_outcomes(tmp_path, SUITE)
    assert {name: o.verdict for name, o in outcomes.items()} == {
        "tools-list": "pass",
        "server-stateless": "pass",
        "prompts-list": "fail",
        "tools-call-simple-text": "fail",
    }
    assert compare(SUITE, outcomes) == []
    assert table(SUITE, outcomes)[-1].strip().startswith("2/2 expected passes pass; 1 pending")


def test_a_pass_scenario_that_fails_fails_the_gate_naming_the_check(tmp_path: Path) -> None:
    _all_as_expected(tmp_path)
    _write(tmp_path, "tools-list", _check("tools-list", "FAILURE", "tools is not an array"))
    (problem,) = compare(SUITE, read_outcomes(tmp_path, SUITE))
    assert problem.startswith("tools-list: expected to pass, fail")
    assert "tools is not an array" in problem


def test_a_testable_check_failing_in_a_partly_testable_scenario_fails_the_gate(
    tmp_path: Path,
) -> None:
    _all_as_expected(tmp_path)
    _write(
        tmp_path,
        "server-stateless",
        _check("discover", "FAILURE", "no server/discover"),
        _check("needs-fixture", "FAILURE", "Not testable"),
    )
    (problem,) = compare(SUITE, read_outcomes(tmp_path, SUITE))
    assert problem.startswith("server-stateless: expected to pass")
    assert "no server/discover" in problem
    assert "needs-fixture" not in problem


def test_a_pass_scenario_with_nothing_passed_fails_the_gate(tmp_path: Path) -> None:
    _all_as_expected(tmp_path)
    _write(tmp_path, "tools-list", _check("session", "WARNING", "no session id"))
    (problem,) = compare(SUITE, read_outcomes(tmp_path, SUITE))
    assert problem == "tools-list: expected to pass, untested: no check passed"


def test_an_unlisted_scenario_fails_the_gate(tmp_path: Path) -> None:
    _all_as_expected(tmp_path)
    _write(tmp_path, "brand-new-scenario", _check("x", "SUCCESS"))
    (problem,) = compare(SUITE, read_outcomes(tmp_path, SUITE))
    assert problem.startswith("brand-new-scenario: the suite ran it but expected.toml")
    assert table(SUITE, read_outcomes(tmp_path, SUITE))[1].split() == [
        "brand-new-scenario",
        "UNLISTED",
        "pass",
    ]


def test_a_listed_scenario_the_suite_no_longer_runs_fails_the_gate(tmp_path: Path) -> None:
    _all_as_expected(tmp_path)
    for run in tmp_path.glob("server-tools-call-simple-text-*"):
        (run / "checks.json").unlink()
    (problem,) = compare(SUITE, read_outcomes(tmp_path, SUITE))
    assert problem == "tools-call-simple-text: listed in expected.toml but the suite did not run it"


def test_a_pending_scenario_that_passes_asks_to_be_flipped(tmp_path: Path) -> None:
    _all_as_expected(tmp_path)
    _write(tmp_path, "prompts-list", _check("prompts-list", "SUCCESS"))
    (problem,) = compare(SUITE, read_outcomes(tmp_path, SUITE))
    assert 'passes now: mark it "pass" in expected.toml' in problem


def test_the_committed_file_lists_each_suite_with_a_status_and_reason_per_scenario() -> None:
    suites = load_suites()
    assert [suite.version for suite in suites] == ["0.1.16", "0.2.0-alpha.12"]
    for suite in suites:
        passes = [name for name, e in suite.scenarios.items() if e.status == "pass"]
        assert {"tools-list", "resources-list", "dns-rebinding-protection"} <= set(passes)


@pytest.mark.parametrize(
    ("raw", "error"),
    [
        ('x = "passes"', "status 'passes' is not one of"),
        ('x = "not-applicable"', "'not-applicable' needs a reason"),
        ('x = { status = "pass", not-testable = ["c"] }', "not-testable checks need a reason"),
    ],
)
def test_a_malformed_expected_file_is_refused_naming_the_scenario(
    tmp_path: Path, raw: str, error: str
) -> None:
    path = tmp_path / "expected.toml"
    path.write_text(f'[suite."1.0"]\nargs = []\n[suite."1.0".scenarios]\n{raw}\n')
    with pytest.raises(ValueError, match=f"^x: {error}"):
        load_suites(path)
