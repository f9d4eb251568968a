"""A grade that failed a check exits 1 (``CHECK_FAILED``, docs/cli.md) from ``kestrel
run`` and ``kestrel grade`` alike: a CI job goes red, and nothing is lost (the table or
JSON is printed, the proof and the grade are written)."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner, Result
from kestrel_sdk import Kestrel
from kestrel_sdk.cli import cli

ROOT = Path(__file__).resolve().parents[3]
TREND = ROOT / "examples" / "trend.kes"


def _kestrel(home: Path, *args: str) -> Result:
    return CliRunner().invoke(cli, ["--home", str(home), *args])


def _failed_line(grade: dict[str, str]) -> list[str]:
    return [
        f"kestrel: CHECK_FAILED: grade {grade['root']} of session {grade['session']} "
        "failed check(s): no-lookahead"
    ]


def test_a_run_whose_grade_fails_no_lookahead_exits_1_and_keeps_its_grade_and_proof(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    with Kestrel(home=home) as k:  # the home's principal reads the whole tape first
        k.tape("acme-trend")
    proof_file = tmp_path / "p.json"
    run = _kestrel(home, "run", str(TREND), "--scenario", "acme-trend", "--out", str(proof_file))
    assert run.exit_code == 1, run.stderr
    assert "FAIL  tape acme-trend read" in run.stdout  # the table, as before
    assert f"proof written to {proof_file}" in run.stdout
    proof = json.loads(proof_file.read_text(encoding="utf-8"))
    grade = proof["grade"]
    assert run.stderr.splitlines() == _failed_line(grade)

    as_json = _kestrel(home, "run", str(TREND), "--scenario", "acme-trend", "--json")
    assert as_json.exit_code == 1
    again = json.loads(as_json.stdout)  # the GradeResult, whole, on stdout
    assert again["kind"] == "kestrel.grade"
    assert not again["passed"]
    assert as_json.stderr.splitlines() == _failed_line(again)

    out = tmp_path / "g.json"
    graded = _kestrel(home, "grade", grade["session"], "--out", str(out))
    assert graded.exit_code == 1
    assert "passed" in graded.stdout
    assert json.loads(out.read_text(encoding="utf-8")) == grade
    assert graded.stderr.splitlines() == _failed_line(grade)


def test_a_passing_run_still_exits_0(tmp_path: Path) -> None:
    run = _kestrel(tmp_path, "run", str(TREND), "--scenario", "acme-trend", "--quiet")
    assert run.exit_code == 0, run.stderr
    assert run.stderr == ""
