from __future__ import annotations

import json
import signal
import subprocess
import sys
from importlib.metadata import EntryPoint
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from kestrel_sdk import Kestrel
from kestrel_sdk.cli import cli
from kestrel_sdk.cli import group as group_module

ROOT = Path(__file__).resolve().parents[3]
TREND = ROOT / "examples" / "trend.kes"


def _kestrel(home: Path, *args: str) -> Result:
    return CliRunner().invoke(cli, ["--home", str(home), *args])


def test_catalog_table_and_json(tmp_path: Path) -> None:
    table = _kestrel(tmp_path, "catalog")
    assert table.exit_code == 0
    for scenario in ("acme-trend", "acme-chop", "acme-crash", "pairs-kx", "minute-200k"):
        assert scenario in table.stdout
    data = json.loads(_kestrel(tmp_path, "catalog", "--json").stdout)
    assert data["kind"] == "kestrel.catalog"
    check = _kestrel(tmp_path, "catalog", "--check")
    assert check.exit_code == 0
    assert "catalog ok" in check.stdout


def test_catalog_check_reports_a_bad_user_scenario(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bad = tmp_path / "user" / "broken"
    bad.mkdir(parents=True)
    (bad / "scenario.toml").write_text('id = "Not Valid"\n', encoding="utf-8")
    monkeypatch.setenv("KESTREL_CATALOG_PATH", str(tmp_path / "user"))
    check = _kestrel(tmp_path, "catalog", "--check")
    assert check.exit_code == 1
    assert "broken" in check.stdout
    assert "catalog problem" in check.stderr
    listing = _kestrel(tmp_path, "catalog")  # the shipped catalog still works
    assert listing.exit_code == 0
    assert "acme-trend" in listing.stdout


def test_catalog_path_flag_adds_a_scenario_directory_as_the_environment_does(
    tmp_path: Path,
) -> None:
    shipped = ROOT / "packages/kestrel-sdk/src/kestrel_sdk/catalog_data/acme-chop"
    mine = tmp_path / "mine" / "my-chop"
    mine.mkdir(parents=True)
    (mine / "tape.csv").write_bytes((shipped / "tape.csv").read_bytes())
    toml = (shipped / "scenario.toml").read_text(encoding="utf-8")
    (mine / "scenario.toml").write_text(toml.replace('"acme-chop"', '"my-chop"', 1), "utf-8")
    assert "my-chop" not in _kestrel(tmp_path, "catalog").stdout
    listed = _kestrel(tmp_path, "--catalog-path", str(tmp_path / "mine"), "catalog")
    assert listed.exit_code == 0, listed.stderr
    assert "my-chop" in listed.stdout
    opened = _kestrel(
        tmp_path,
        "--catalog-path",
        str(tmp_path / "mine"),
        "run",
        str(TREND),
        "--scenario",
        "my-chop",
    )
    assert opened.exit_code == 0, opened.stderr


def test_validate_prints_located_diagnostics_and_exits_1(tmp_path: Path) -> None:
    program = tmp_path / "bad.kes"
    program.write_text("buy 10 ACME\nsell ten ACME\nfly away\n", encoding="utf-8")
    result = _kestrel(tmp_path, "validate", str(program))
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert lines[0] == f"{program}:2:6: K102 " + lines[0].split(" K102 ", 1)[1]
    assert lines[1].startswith(f"{program}:3:1: K100 ")
    ok = _kestrel(tmp_path, "validate", str(TREND), "--scenario", "acme-trend")
    assert ok.exit_code == 0
    assert "ok (9 statements)" in ok.stdout
    one = tmp_path / "one.kes"
    one.write_text("advance 5\n", encoding="utf-8")
    single = _kestrel(tmp_path, "validate", str(one))
    assert single.stdout == f"{one}: ok (1 statement)\n"  # never "1 statements"
    scenario_error = tmp_path / "sym.kes"
    scenario_error.write_text("buy 10 NOPE\n", encoding="utf-8")
    bad_symbol = _kestrel(tmp_path, "validate", str(scenario_error), "--scenario", "acme-trend")
    assert bad_symbol.exit_code == 1
    assert f"{scenario_error}:1:8: K201" in bad_symbol.stdout


def test_run_grade_verify_and_tamper(tmp_path: Path) -> None:
    proof_file = tmp_path / "p.json"
    run = _kestrel(
        tmp_path, "run", str(TREND), "--scenario", "acme-trend", "--out", str(proof_file)
    )
    assert run.exit_code == 0, run.stderr
    assert "pnl" in run.stdout
    assert "chain-intact" in run.stdout
    proof = json.loads(proof_file.read_text(encoding="utf-8"))
    assert proof["kind"] == "kestrel.proof"
    grade = proof["grade"]
    assert grade["kind"] == "kestrel.grade"
    verified_proof = _kestrel(tmp_path, "verify", str(proof_file))
    assert verified_proof.exit_code == 0, verified_proof.stderr
    assert f"ok: proof {proof['root']} of grade {grade['root']}" in verified_proof.stdout
    out = tmp_path / "g.json"  # a grade file verifies from the artifact store, as before
    again = _kestrel(tmp_path, "grade", grade["session"], "--json", "--out", str(out))
    assert json.loads(again.stdout) == grade
    assert json.loads(out.read_text(encoding="utf-8")) == grade
    verified = _kestrel(tmp_path, "verify", str(out))
    assert verified.exit_code == 0
    assert grade["root"] in verified.stdout
    artifact = _kestrel(tmp_path, "artifact", grade["record"])
    assert artifact.exit_code == 0
    assert json.loads(artifact.stdout)["kind"] == "kestrel.session"

    tampered = dict(grade, metrics=dict(grade["metrics"], fees="0.00"))
    bad = tmp_path / "tampered.json"
    bad.write_text(json.dumps(tampered), encoding="utf-8")
    failed = _kestrel(tmp_path, "verify", str(bad))
    assert failed.exit_code == 1
    assert failed.stderr.strip().splitlines() == [
        "kestrel: CHECK_FAILED: verification failed: metrics.fees: expected "
        f"{grade['metrics']['fees']},"
        " found 0.00"
    ]
    root_only = dict(grade, root="sha256:" + "0" * 64)
    bad.write_text(json.dumps(root_only), encoding="utf-8")
    failed_root = _kestrel(tmp_path, "verify", str(bad), "--json")
    assert failed_root.exit_code == 1
    assert json.loads(failed_root.stdout)["mismatch"]["field"] == "root"


def test_run_refuses_invalid_programs_with_exit_1(tmp_path: Path) -> None:
    program = tmp_path / "p.kes"
    program.write_text("buy 10 ACME limit 1.001\n", encoding="utf-8")
    result = _kestrel(tmp_path, "run", str(program), "--scenario", "acme-trend")
    assert result.exit_code == 1
    assert f"{program}:1:19: K202" in result.stderr


def test_long_runs_are_chunked_with_the_same_metrics(tmp_path: Path) -> None:
    program = tmp_path / "long.kes"
    program.write_text("buy 10 ACME\nadvance 6000\nsell 10 ACME\nadvance 5\n", encoding="utf-8")
    # two homes: a second run by the same principal on the scenario would trade behind
    # the first one's horizon (and fail no-lookahead, as it should)
    chunked = _kestrel(
        tmp_path / "a", "run", str(program), "--scenario", "minute-200k", "--json", "--label", "a"
    )
    atomic = _kestrel(
        tmp_path / "b",
        "run",
        str(program),
        "--scenario",
        "minute-200k",
        "--json",
        "--label",
        "b",
        "--atomic",
    )
    assert chunked.exit_code == 0, chunked.stderr
    assert atomic.exit_code == 0, atomic.stderr
    one, many = json.loads(atomic.stdout), json.loads(chunked.stdout)
    assert one["metrics"] == many["metrics"]
    assert [c["passed"] for c in one["conformance"]["checks"]] == [
        c["passed"] for c in many["conformance"]["checks"]
    ]
    records = [
        json.loads(_kestrel(tmp_path / home, "artifact", g["record"]).stdout)
        for home, g in (("b", one), ("a", many))
    ]
    assert len(records[0]["pentads"]) == 1
    assert len(records[1]["pentads"]) > 10


def test_refusals_are_one_line_with_exit_3(tmp_path: Path) -> None:
    unknown = _kestrel(tmp_path, "artifact", "sha256:" + "0" * 64)
    assert unknown.exit_code == 3
    assert unknown.stderr.splitlines() == [
        f"kestrel: UNKNOWN_ARTIFACT: no artifact sha256:{'0' * 64}"
    ]
    session = _kestrel(tmp_path, "grade", "ks_nothing")
    assert session.exit_code == 3
    assert session.stderr.startswith("kestrel: UNKNOWN_SESSION: ")
    scenario = _kestrel(tmp_path, "run", str(TREND), "--scenario", "nope")
    assert scenario.exit_code == 3
    assert "UNKNOWN_SCENARIO" in scenario.stderr
    remote = CliRunner().invoke(cli, ["--remote", "http://127.0.0.1:9", "catalog"])
    assert remote.exit_code == 3
    assert remote.stderr.startswith("kestrel: BACKEND_UNAVAILABLE: ")
    assert "Traceback" not in unknown.stderr + session.stderr + remote.stderr
    usage = _kestrel(tmp_path, "run", str(TREND))
    assert usage.exit_code == 2
    [line] = usage.stderr.splitlines()  # one line, not click's usage block
    assert line.startswith("kestrel: USAGE: Missing option '--scenario'. (see '")


def test_plugins_load_and_a_broken_one_never_breaks_the_cli(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "kestrel_fake_plugin.py").write_text(
        "import click\n\n@click.command()\n"
        "def hello() -> None:\n    click.echo('hello from plugin')\n",
        encoding="utf-8",
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    points = [
        EntryPoint("hello", "kestrel_fake_plugin:hello", "kestrel.cli"),
        EntryPoint("broken", "kestrel_no_such_module:cli", "kestrel.cli"),
        EntryPoint("notcmd", "json:dumps", "kestrel.cli"),
    ]
    monkeypatch.setattr(group_module, "entry_points", lambda group: points)
    monkeypatch.setattr(cli, "_plugins", None)
    monkeypatch.setattr(cli, "_loaded", {})
    hello = _kestrel(tmp_path, "hello")
    assert hello.exit_code == 0
    assert "hello from plugin" in hello.stdout
    listing = _kestrel(tmp_path, "--help")
    assert listing.exit_code == 0
    assert "hello" in listing.stdout
    assert "broken" not in listing.stdout
    assert "plugin 'broken'" in listing.stderr
    assert "plugin 'notcmd'" in listing.stderr
    assert _kestrel(tmp_path, "catalog").exit_code == 0


def test_console_script_run_and_verify(tmp_path: Path) -> None:
    kestrel = Path(sys.executable).parent / "kestrel"
    out = tmp_path / "g.json"
    home = ["--home", str(tmp_path / "home")]
    run = subprocess.run(
        [str(kestrel), *home, "run", str(TREND), "--scenario", "acme-trend", "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    assert "Grade of" in run.stdout
    verify = subprocess.run(
        [str(kestrel), *home, "verify", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert verify.returncode == 0, verify.stderr
    assert verify.stdout.startswith("ok: proof sha256:")


def test_home_is_passed_on_to_plugin_verbs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "kestrel_home_plugin.py").write_text(
        "import click\nfrom kestrel_protocol.settings import KestrelSettings\n\n"
        "@click.command()\n@click.pass_context\n"
        "def where(ctx: click.Context) -> None:\n"
        "    click.echo(ctx.find_object(KestrelSettings).home)\n",
        encoding="utf-8",
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    points = [EntryPoint("where", "kestrel_home_plugin:where", "kestrel.cli")]
    monkeypatch.setattr(group_module, "entry_points", lambda group: points)
    monkeypatch.setattr(cli, "_plugins", None)
    monkeypatch.setattr(cli, "_loaded", {})
    result = _kestrel(tmp_path / "elsewhere", "where")
    assert result.stdout.strip() == str(tmp_path / "elsewhere")


def test_globals_do_not_leak_into_the_calling_process(tmp_path: Path) -> None:
    import os

    before = (os.environ.get("KESTREL_HOME"), os.environ.get("KESTREL_REMOTE"))
    CliRunner().invoke(
        cli, ["--home", str(tmp_path / "x"), "--remote", "http://127.0.0.1:9", "catalog"]
    )
    assert (os.environ.get("KESTREL_HOME"), os.environ.get("KESTREL_REMOTE")) == before


def test_run_shows_session_dependent_diagnostics_located(tmp_path: Path) -> None:
    program = tmp_path / "ref.kes"
    program.write_text("buy 10 ACME\nadvance 2\ncancel ghost\n", encoding="utf-8")
    result = _kestrel(tmp_path, "run", str(program), "--scenario", "acme-trend")
    assert result.exit_code == 1
    assert f"{program}:3:8: K204" in result.stderr
    assert "kestrel: INVALID_SOURCE:" in result.stderr


def test_out_makes_its_directory_and_an_unwritable_path_is_named(tmp_path: Path) -> None:
    nested = tmp_path / "new" / "deeper" / "p.json"  # directories that do not exist yet
    run = _kestrel(tmp_path, "run", str(TREND), "--scenario", "acme-trend", "--out", str(nested))
    assert run.exit_code == 0, run.stderr
    proof = json.loads(nested.read_text(encoding="utf-8"))
    session = proof["grade"]["session"]
    grade_file = tmp_path / "grades" / "g.json"
    graded = _kestrel(tmp_path, "grade", session, "--out", str(grade_file))
    assert graded.exit_code == 0, graded.stderr
    assert json.loads(grade_file.read_text(encoding="utf-8")) == proof["grade"]
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory", encoding="utf-8")
    refused = _kestrel(tmp_path, "grade", session, "--out", str(blocker / "g.json"))
    assert refused.exit_code != 0
    assert "INTERNAL" not in refused.stderr
    assert f"INVALID_INPUT: --out {blocker / 'g.json'}: cannot write" in refused.stderr
    assert blocker.read_text(encoding="utf-8") == "not a directory"


def test_ctrl_c_mid_run_names_the_session_it_leaves_and_how_to_grade_it(tmp_path: Path) -> None:
    """Ctrl-C while ``kestrel run`` trades: one line, exit 130 (``INTERRUPTED``, as
    docs/cli.md has it), naming the session left ungraded, the command that grades it,
    and why a re-run would fail ``no-lookahead``; that command then grades it."""
    home = tmp_path / "home"
    program = tmp_path / "long.kes"
    program.write_text('buy 10 ACME\nadvance 199000\nstand down "done"\n', encoding="utf-8")
    kestrel = Path(sys.executable).parent / "kestrel"
    listed: list[Any] = []
    with Kestrel(home=home) as k:  # watches the store for the session the run opens
        child = subprocess.Popen(
            [str(kestrel), "--home", str(home), "run", str(program), "--scenario", "minute-200k"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            while not listed and child.poll() is None:
                listed = k.run(k.sdk.sessions).sessions
            child.send_signal(signal.SIGINT)  # what Ctrl-C sends
            _, stderr = child.communicate(timeout=120)
        finally:
            child.kill()
    [session] = listed
    assert child.returncode == 130, stderr
    assert stderr.startswith(f"kestrel: INTERRUPTED: interrupted: session {session.session}")
    assert f"`kestrel grade {session.session}`" in stderr
    assert "no-lookahead" in stderr
    assert len(stderr.splitlines()) == 1, stderr
    graded = _kestrel(home, "grade", session.session, "--json")
    assert graded.exit_code == 0, graded.stderr
    assert json.loads(graded.stdout)["session"] == session.session


def test_a_grade_file_used_in_another_home_says_why_and_what_verifies_anywhere(
    tmp_path: Path,
) -> None:
    """A grade file carried to an empty home (the newcomer's "share the grade"): its
    verification still fails and its report is still refused (its record is not in this
    store), each line saying that a grade is read only where it was made and that its
    proof verifies anywhere."""
    made, grade = tmp_path / "made", tmp_path / "grade.json"
    ran = _kestrel(made, "run", str(TREND), "--scenario", "acme-trend", "--quiet")
    assert ran.exit_code == 0, ran.stderr
    [listed] = json.loads(_kestrel(made, "sessions", "--json").stdout)["sessions"]
    assert _kestrel(made, "grade", listed["session"], "--out", str(grade)).exit_code == 0
    assert _kestrel(made, "verify", str(grade)).exit_code == 0
    elsewhere = _kestrel(tmp_path / "elsewhere", "verify", str(grade))
    assert elsewhere.exit_code == 1
    [line] = elsewhere.stderr.splitlines()
    assert line.startswith("kestrel: CHECK_FAILED: verification failed: record: expected ")
    assert "is read only in the store that made it" in line
    assert "kestrel proof SESSION -o p.json" in line
    reported = _kestrel(tmp_path / "elsewhere", "report", str(grade), "-o", str(tmp_path / "r"))
    assert reported.exit_code == 3
    [line] = reported.stderr.splitlines()
    assert line.startswith("kestrel: UNKNOWN_ARTIFACT: no artifact sha256:"), line
    assert "is read only in the store that made it" in line


def test_verify_and_report_refuse_a_file_that_is_no_grade_the_same_way(tmp_path: Path) -> None:
    """The same bad file given to ``kestrel verify`` and to ``kestrel report``: one line,
    the same code and exit (``INVALID_INPUT``, 1, as docs/cli.md has it; ``report`` said
    ``UNKNOWN_ARTIFACT``, exit 3), and a missing file is a usage error for both."""
    empty, program = tmp_path / "empty.json", tmp_path / "trend.kes"
    empty.write_text("{}", encoding="utf-8")
    program.write_bytes(TREND.read_bytes())
    for bad in (empty, program):
        for verb in ("verify", "report"):
            refused = _kestrel(tmp_path / "home", verb, str(bad))
            assert refused.exit_code == 1, (verb, bad, refused.stderr)
            [line] = refused.stderr.splitlines()
            assert line.startswith(f"kestrel: INVALID_INPUT: {bad}: not a Kestrel "), line
    for verb in ("verify", "report"):
        missing = _kestrel(tmp_path / "home", verb, str(tmp_path / "nothere.json"))
        assert missing.exit_code == 2, (verb, missing.stderr)
        assert missing.stderr.startswith("kestrel: USAGE: "), missing.stderr


def test_verify_and_board_name_what_trust_takes_alike(tmp_path: Path) -> None:
    """``--trust`` takes the same keys on both verbs (a door's URL, its JWKS URL, a JWKS
    file), and their helps say it in the same words."""
    for verb in ("verify", "board"):
        shown = _kestrel(tmp_path, verb, "--help")
        assert shown.exit_code == 0, shown.output
        assert "--trust URL|JWKS-FILE" in shown.stdout, (verb, shown.stdout)
