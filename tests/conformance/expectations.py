"""What the MCP conformance suite is expected to say about the door, and the comparison.

``expected.toml`` (next to this file) pins each suite version, the arguments it runs with,
and every server scenario it runs, each with one status:

* ``"pass"`` — the scenario must pass: no failed check and at least one passed check;
* ``"not-applicable: REASON"`` — the scenario exercises something Kestrel does not have by
  design (the suite's own fixture tools, prompts or resources; an extension); its outcome
  is shown, never asserted;
* ``"pending: REASON"`` — expected to fail until a feature lands; once it passes, the
  comparison says so, so the file is flipped to ``"pass"`` in the same change.

A passing scenario some of whose checks need fixture tools is written as a table:
``{ status = "pass", not-testable = ["check-id", ...], reason = "..." }`` — those checks
may fail, every other check must not.

The suite writes one ``server-<scenario>-<timestamp>/checks.json`` per scenario it ran.
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

__all__ = [
    "EXPECTED_FILE",
    "TABLES",
    "Expectation",
    "Outcome",
    "Suite",
    "compare",
    "load_suites",
    "read_outcomes",
    "table",
]

EXPECTED_FILE = Path(__file__).with_name("expected.toml")
TABLES = pytest.StashKey[list[str]]()  # the run's tables, printed by conftest.py at its end
STATUSES = ("pass", "not-applicable", "pending")
_RUN_DIR = re.compile(r"^server-(?P<scenario>.+)-\d{4}-\d\d-\d\dT[\d-]+Z$")


@dataclass(frozen=True)
class Expectation:
    status: str
    reason: str = ""
    not_testable: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Suite:
    version: str
    args: tuple[str, ...]
    scenarios: Mapping[str, Expectation]


@dataclass(frozen=True)
class Outcome:
    """One scenario's checks, judged: ``pass``, ``fail`` or ``untested`` (nothing passed)."""

    verdict: str
    passed: int
    failures: tuple[str, ...] = field(default=())


def _expectation(scenario: str, raw: Any) -> Expectation:
    if isinstance(raw, str):
        status, _, reason = raw.partition(":")
        expectation = Expectation(status.strip(), reason.strip())
    elif isinstance(raw, dict):
        expectation = Expectation(
            str(raw.get("status", "")),
            str(raw.get("reason", "")),
            frozenset(str(check) for check in raw.get("not-testable", [])),
        )
    else:
        raise ValueError(f"{scenario}: expected a status string or table, got {raw!r}")
    if expectation.status not in STATUSES:
        raise ValueError(f"{scenario}: status {expectation.status!r} is not one of {STATUSES}")
    if expectation.status != "pass" and not expectation.reason:
        raise ValueError(f"{scenario}: {expectation.status!r} needs a reason after a colon")
    if expectation.not_testable and not expectation.reason:
        raise ValueError(f"{scenario}: not-testable checks need a reason")
    return expectation


def load_suites(path: Path = EXPECTED_FILE) -> list[Suite]:
    """Every pinned suite in ``path``, in file order."""
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    suites = []
    for version, body in data["suite"].items():
        scenarios = {name: _expectation(name, raw) for name, raw in body["scenarios"].items()}
        suites.append(Suite(version, tuple(body.get("args", ())), scenarios))
    return suites


def _outcome(checks: list[dict[str, Any]], not_testable: frozenset[str]) -> Outcome:
    passed = sum(1 for check in checks if check.get("status") == "SUCCESS")
    failures = tuple(
        f"{check.get('id')}: {check.get('errorMessage') or check.get('description', '')}"
        for check in checks
        if check.get("status") == "FAILURE" and check.get("id") not in not_testable
    )
    verdict = "fail" if failures else "pass" if passed else "untested"
    return Outcome(verdict, passed, failures)


def read_outcomes(out_dir: Path, suite: Suite) -> dict[str, Outcome]:
    """Each scenario the suite ran (one ``checks.json`` directory each), judged."""
    outcomes = {}
    for checks_file in sorted(out_dir.glob("*/checks.json")):
        match = _RUN_DIR.match(checks_file.parent.name)
        if match is None:
            raise ValueError(f"unexpected conformance output directory {checks_file.parent}")
        scenario = match["scenario"]
        expected = suite.scenarios.get(scenario, Expectation("pass"))
        outcomes[scenario] = _outcome(json.loads(checks_file.read_text()), expected.not_testable)
    return outcomes


def compare(suite: Suite, outcomes: Mapping[str, Outcome]) -> list[str]:
    """Every way ``outcomes`` break ``suite``'s expectations (empty when they hold)."""
    problems = []
    for scenario in sorted(set(outcomes) - set(suite.scenarios)):
        problems.append(
            f"{scenario}: the suite ran it but expected.toml does not list it "
            f"(verdict: {outcomes[scenario].verdict}; add it as pass, not-applicable or pending)"
        )
    for scenario, expected in suite.scenarios.items():
        outcome = outcomes.get(scenario)
        if outcome is None:
            problems.append(f"{scenario}: listed in expected.toml but the suite did not run it")
        elif expected.status == "pass" and outcome.verdict != "pass":
            detail = "; ".join(outcome.failures) or "no check passed"
            problems.append(f"{scenario}: expected to pass, {outcome.verdict}: {detail}")
        elif expected.status == "pending" and outcome.verdict == "pass":
            problems.append(
                f"{scenario}: pending ({expected.reason}) but it passes now: "
                f'mark it "pass" in {EXPECTED_FILE.name}'
            )
    return problems


def table(suite: Suite, outcomes: Mapping[str, Outcome]) -> list[str]:
    """One line per scenario (passes, then pending, then not-applicable), then a count."""
    order = {"UNLISTED": 0, "pass": 1, "pending": 2, "not-applicable": 3}

    def status(name: str) -> str:
        expected = suite.scenarios.get(name)
        return expected.status if expected else "UNLISTED"

    names = sorted(set(suite.scenarios) | set(outcomes), key=lambda n: (order[status(n)], n))
    width = max(len(name) for name in names)
    lines = [f"MCP conformance {suite.version} ({' '.join(suite.args)}) against kestrel-door serve"]
    for name in names:
        expected = suite.scenarios.get(name)
        outcome = outcomes.get(name)
        verdict = outcome.verdict if outcome else "not run"
        note = ""
        if outcome and outcome.failures and status(name) in {"pass", "UNLISTED"}:
            note = outcome.failures[0]
        elif expected:
            note = expected.reason
        line = f"  {name:<{width}}  {status(name):<14}  {verdict:<8}  {note}"
        lines.append(line[:160].rstrip())
    counts = {key: sum(1 for n in names if status(n) == key) for key in order}
    passing = sum(
        1 for n in names if status(n) == "pass" and n in outcomes and outcomes[n].verdict == "pass"
    )
    lines.append(
        f"  {passing}/{counts['pass']} expected passes pass; {counts['pending']} pending; "
        f"{counts['not-applicable']} not applicable; {counts['UNLISTED']} unlisted"
    )
    return lines
