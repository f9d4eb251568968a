"""``kestrel home`` and ``kestrel prune`` on a real SQLite home, through the real CLI.

"Older than a date" is the session's close, stamped by the store's database; a test
cannot wait for days, so it moves a close back in the store's ``session_times`` table
as the passing of time would have left it.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from kestrel_sdk.cli import cli
from kestrel_sdk.runtime import Runtime

ROOT = Path(__file__).resolve().parents[3]
TREND = ROOT / "examples" / "trend.kes"
LONG_AGO = "2026-01-05T10:00:00Z"
CUTOFF = "2026-06-01"


def _kestrel(home: Path, *args: str) -> Result:
    return CliRunner().invoke(cli, ["--home", str(home), *args])


def _run(home: Path, scenario: str) -> dict[str, Any]:
    """``kestrel run`` of the trend plan: a closed, graded session; its grade (exit 1
    when it failed a check)."""
    done = _kestrel(home, "run", str(TREND), "--scenario", scenario, "--json")
    grade: dict[str, Any] = json.loads(done.stdout)
    assert done.exit_code == (0 if grade["passed"] else 1), done.stderr
    return grade


def _backdate(home: Path, *sessions: str) -> None:
    with sqlite3.connect(home / "kestrel.db") as conn:
        for sid in sessions:
            conn.execute(
                "UPDATE session_times SET closed_at = ? WHERE session = ?", (LONG_AGO, sid)
            )


def _db_bytes(home: Path) -> int:
    return sum(
        (home / name).stat().st_size
        for name in ("kestrel.db", "kestrel.db-wal", "kestrel.db-shm")
        if (home / name).exists()
    )


class Home:
    """A home with an old graded session (with a demo report), a new graded one, an
    open one and an old closed one never graded."""

    def __init__(self, home: Path) -> None:
        self.path = home
        self.old_grade = _run(home, "acme-trend")
        self.old = self.old_grade["session"]
        self.new = _run(home, "acme-chop")["session"]
        rt = Runtime(home)
        opened = rt.open_session("local", "acme-crash").session_id
        ungraded = rt.open_session("local", "pairs-kx").session_id
        assert opened is not None
        assert ungraded is not None
        self.open, self.ungraded = opened, ungraded
        rt.submit("local", self.open, "advance 3").model()
        rt.submit("local", self.ungraded, "advance 3").model()
        rt.close("local", self.ungraded)
        rt.shutdown()
        _backdate(home, self.old, self.ungraded)
        self.report = home / "reports" / self.old  # where kestrel demo writes its grade
        self.report.mkdir(parents=True)
        graded = _kestrel(home, "grade", self.old, "--out", str(self.report / "grade.json"))
        assert graded.exit_code == 0, graded.stderr


def test_dry_run_lists_what_would_go_and_deletes_nothing(tmp_path: Path) -> None:
    home = Home(tmp_path)
    before = _db_bytes(tmp_path)
    listed = _kestrel(tmp_path, "prune", "--before", CUTOFF, "--dry-run")
    assert listed.exit_code == 0, listed.stderr
    lines = listed.stdout.splitlines()
    assert [line.split()[2] for line in lines if line.startswith("would prune")] == [home.old]
    assert any(line.startswith(f"would prune {home.old} (acme-trend") for line in lines)
    assert str(home.report) in listed.stdout
    assert f"kept {home.ungraded}: closed but never graded" in listed.stdout
    assert home.new not in listed.stdout
    assert home.open not in listed.stdout
    assert "nothing was deleted" in lines[-1]
    assert _db_bytes(tmp_path) == before
    assert home.report.is_dir()
    proof = _kestrel(tmp_path, "proof", home.old, "-o", str(tmp_path / "old.json"))
    assert proof.exit_code == 0, proof.stderr


def test_prune_removes_only_closed_sessions_before_the_date_and_reports_what_it_freed(
    tmp_path: Path,
) -> None:
    home = Home(tmp_path)
    report_bytes = sum(f.stat().st_size for f in home.report.rglob("*") if f.is_file())
    before = _db_bytes(tmp_path)
    done = _kestrel(tmp_path, "prune", "--before", CUTOFF, "--json")
    assert done.exit_code == 0, done.stderr
    outcome = json.loads(done.stdout)
    assert [row["session"] for row in outcome["sessions"]] == [home.old]
    assert outcome["ungraded"] == [home.ungraded]
    after = _db_bytes(tmp_path)
    assert outcome["storeBytes"] == {"before": before, "after": after}
    assert outcome["freedBytes"] == before - after + report_bytes
    assert after < before
    assert not home.report.exists()

    # the pruned session still answers its grade, and refuses what needs its steps
    again = _kestrel(tmp_path, "grade", home.old, "--json")
    assert again.exit_code == 0, again.stderr
    assert json.loads(again.stdout)["root"] == home.old_grade["root"]
    proof = _kestrel(tmp_path, "proof", home.old, "-o", str(tmp_path / "old.json"))
    assert proof.exit_code == 3
    assert proof.stderr.startswith(f"kestrel: UNKNOWN_ARTIFACT: session {home.old} was pruned")
    kept = tmp_path / "old-grade.json"
    kept.write_text(json.dumps(home.old_grade), encoding="utf-8")
    replay = _kestrel(tmp_path, "verify", str(kept))
    assert replay.exit_code == 3
    assert "was pruned" in replay.stderr

    # the newer, the open and the ungraded sessions are whole
    newer = _kestrel(tmp_path, "proof", home.new, "-o", str(tmp_path / "new.json"))
    assert newer.exit_code == 0, newer.stderr
    assert _kestrel(tmp_path, "verify", str(tmp_path / "new.json")).exit_code == 0
    rt = Runtime(tmp_path)
    assert rt.submit("local", home.open, "advance 1").model().ok
    assert rt.proof("local", home.ungraded).model().record.session == home.ungraded
    rt.shutdown()

    # graded now (its proof graded it), the old session kept for that goes next time
    second = _kestrel(tmp_path, "prune", "--before", CUTOFF, "--json")
    assert [row["session"] for row in json.loads(second.stdout)["sessions"]] == [home.ungraded]
    assert (
        json.loads(_kestrel(tmp_path, "prune", "--before", CUTOFF, "--json").stdout)["sessions"]
        == []
    )
    summary = json.loads(_kestrel(tmp_path, "home", "--json").stdout)["summary"]
    assert (summary["sessions"], summary["open"], summary["pruned"]) == (4, 1, 2)


def test_a_pruned_session_still_counts_toward_the_principals_horizon(tmp_path: Path) -> None:
    """The principal's next session on the scenario fails no-lookahead exactly as it
    does in a home where nothing was pruned."""
    grades = []
    for name, prune in (("kept", False), ("pruned", True)):
        home = tmp_path / name
        first = _run(home, "acme-trend")["session"]
        if prune:
            _backdate(home, first)
            done = _kestrel(home, "prune", "--before", CUTOFF, "--json")
            assert [row["session"] for row in json.loads(done.stdout)["sessions"]] == [first]
        grades.append(_run(home, "acme-trend"))
    kept, pruned = grades
    check = next(c for c in pruned["conformance"]["checks"] if c["id"] == "no-lookahead")
    assert not check["passed"]
    assert "of the same principal had reached bar" in check["detail"]
    assert pruned["root"] == kept["root"]


def test_a_bad_date_is_refused_naming_the_argument(tmp_path: Path) -> None:
    for value in ("2026-13-45", "last tuesday", ""):
        done = _kestrel(tmp_path, "prune", "--before", value)
        assert done.exit_code == 2
        assert done.stderr.startswith("kestrel: USAGE: Invalid value for '--before'")
    missing = _kestrel(tmp_path, "prune", "--dry-run")
    assert missing.exit_code == 2
    assert "--before" in missing.stderr
    assert not (tmp_path / "kestrel.db").exists()


def test_home_lists_each_part_with_its_size(tmp_path: Path) -> None:
    home = Home(tmp_path)
    (tmp_path / "notes.txt").write_text("mine", encoding="utf-8")
    shown = _kestrel(tmp_path, "home")
    assert shown.exit_code == 0, shown.stderr
    assert shown.stdout.startswith(f"Kestrel home: {tmp_path} (")
    data = json.loads(_kestrel(tmp_path, "home", "--json").stdout)
    parts = {part["path"]: part for part in data["parts"]}
    assert parts["kestrel.db"]["bytes"] == (tmp_path / "kestrel.db").stat().st_size
    report_bytes = sum(f.stat().st_size for f in (tmp_path / "reports").rglob("*") if f.is_file())
    assert parts["reports/"]["bytes"] == report_bytes
    assert parts["notes.txt"]["what"] == "not Kestrel's"
    assert data["bytes"] == sum(part["bytes"] for part in data["parts"])
    summary = data["summary"]
    assert (summary["sessions"], summary["open"], summary["closed"]) == (4, 1, 3)
    assert (summary["ungraded"], summary["pruned"]) == (1, 0)
    assert summary["firstClosed"] == LONG_AGO
    everything = _kestrel(tmp_path, "prune", "--before", "2100-01-01", "--dry-run", "--json")
    listed = json.loads(everything.stdout)
    assert [row["session"] for row in listed["sessions"]] == [home.old, home.new]
    assert summary["prunableBytes"] == listed["stepBytes"]


def test_an_empty_home_is_shown_not_created(tmp_path: Path) -> None:
    nowhere = tmp_path / "fresh"
    shown = _kestrel(nowhere, "home")
    assert shown.exit_code == 0, shown.stderr
    assert "not created yet" in shown.stdout
    pruned = _kestrel(nowhere, "prune", "--before", CUTOFF)
    assert pruned.exit_code == 0, pruned.stderr
    assert "nothing to prune" in pruned.stdout
    assert not nowhere.exists()


def test_a_home_of_another_schema_is_refused_with_the_steps_and_left_alone(
    tmp_path: Path,
) -> None:
    Runtime(tmp_path).shutdown()
    with sqlite3.connect(tmp_path / "kestrel.db") as conn:
        conn.execute("UPDATE meta SET value = '6' WHERE key = 'schema'")
    before = (tmp_path / "kestrel.db").read_bytes()
    for args in (("home",), ("prune", "--before", CUTOFF)):
        done = _kestrel(tmp_path, *args)
        assert done.exit_code == 3, args
        assert done.stderr.startswith("kestrel: BACKEND_UNAVAILABLE: ")
        for step in ("has store schema 6", "kestrel proof SESSION -o FILE", "mv "):
            assert step in done.stderr, (args, step)
    assert "kestrel.db" in _kestrel(tmp_path, "home").stdout  # listed before the refusal
    assert (tmp_path / "kestrel.db").read_bytes() == before


def test_prune_works_alike_on_a_postgresql_store(tmp_path: Path, postgres_dsn: str) -> None:
    import psycopg

    first = _kestrel(
        tmp_path, "--store", postgres_dsn, "run", str(TREND), "--scenario", "acme-trend", "--json"
    )
    assert first.exit_code == 0, first.stderr
    old = json.loads(first.stdout)["session"]
    newer = _kestrel(
        tmp_path, "--store", postgres_dsn, "run", str(TREND), "--scenario", "acme-chop", "--json"
    )
    new = json.loads(newer.stdout)["session"]
    with psycopg.connect(postgres_dsn, autocommit=True) as conn:
        conn.execute(
            "UPDATE kestrel_session_times SET closed_at = %s WHERE session = %s", (LONG_AGO, old)
        )
    done = _kestrel(tmp_path, "--store", postgres_dsn, "prune", "--before", CUTOFF, "--json")
    assert done.exit_code == 0, done.stderr
    outcome = json.loads(done.stdout)
    assert [row["session"] for row in outcome["sessions"]] == [old]
    assert outcome["store"].startswith("postgresql://")
    proof = _kestrel(tmp_path, "--store", postgres_dsn, "proof", old)
    assert proof.exit_code == 3
    assert f"session {old} was pruned" in proof.stderr
    kept = _kestrel(tmp_path, "--store", postgres_dsn, "proof", new, "-o", str(tmp_path / "n.json"))
    assert kept.exit_code == 0, kept.stderr
    summary = json.loads(_kestrel(tmp_path, "--store", postgres_dsn, "home", "--json").stdout)
    assert (summary["summary"]["closed"], summary["summary"]["pruned"]) == (2, 1)
    assert not (tmp_path / "kestrel.db").exists()  # nothing was kept in the home's SQLite


def test_home_names_the_secret_stores_own_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``kestrel secrets set`` writes ``.env`` and takes ``.env.lock`` beside it: ``kestrel
    home`` says what both are, never that a file Kestrel made is "not Kestrel's"."""
    monkeypatch.setenv("KESTREL_SECRET_STORE", "file")
    done = CliRunner().invoke(
        cli, ["--home", str(tmp_path), "secrets", "set", "PAPER_KEY", "--stdin"], input="x\n"
    )
    assert done.exit_code == 0, done.output
    assert (tmp_path / ".env.lock").exists()
    data = json.loads(_kestrel(tmp_path, "home", "--json").stdout)
    parts = {part["path"]: part for part in data["parts"]}
    assert parts[".env"]["what"].startswith("your paper-only secrets")
    assert parts[".env.lock"]["what"] == "the lock kestrel secrets holds while it writes .env"
    assert "not Kestrel's" not in {part["what"] for part in data["parts"]}
