"""The main job end to end: ``kestrel demo`` trades, grades, verifies and writes a report
that a real browser renders with the grade's own numbers."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from kestrel_protocol import GradeResult, Proof

from tests.browser import dump_dom, screenshot
from tests.doors import serve_door
from tests.peers import INSTALL_SERVICES, chromium, require_peer


def _kestrel(
    home: Path, *args: str, timeout: float = 300, columns: int = 200
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(Path(sys.executable).parent / "kestrel"), "--home", str(home), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "COLUMNS": str(columns)},
        check=False,
    )


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, GradeResult, str]:
    root = tmp_path_factory.mktemp("demo")
    out = root / "out"
    done = _kestrel(root / "home", "demo", "--quiet", "--out", str(out))
    assert done.returncode == 0, done.stderr
    report = Path(done.stdout.strip().splitlines()[-1])
    grade = GradeResult.parse((out / "grade.json").read_bytes())
    return report, grade, report.read_text(encoding="utf-8")


def test_demo_ends_with_a_verified_grade_and_a_report_path(
    demo_run: tuple[Path, GradeResult, str], tmp_path: Path
) -> None:
    report, grade, _ = demo_run
    assert report.is_file()
    assert report.name == "report.html"
    assert grade.scenario.id == "acme-trend"
    assert grade.metrics.fills > 0
    grade_file = report.parent / "grade.json"
    verified = _kestrel(report.parent.parent / "home", "verify", str(grade_file))
    assert verified.returncode == 0, verified.stdout + verified.stderr


def test_demo_at_80_columns_prints_whole_paths_and_each_phase(tmp_path: Path) -> None:
    home = tmp_path / "a-home-with-a-rather-long-name-as-users-have" / "kestrel-home"
    done = _kestrel(home, "demo", "--scenario", "acme-chop", columns=80)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    folder = next(iter((home / "reports").iterdir()))
    grade = GradeResult.parse((folder / "grade.json").read_bytes())
    # each on a line of its own, whole (longer than 80 columns: never cut or wrapped)
    assert f"grade root  {grade.root}" in lines
    assert f"grade       {folder / 'grade.json'}" in lines
    assert f"report      {folder / 'report.html'}" in lines
    assert len(str(folder / "report.html")) > 80
    # after the progress bar, every phase says what it did (stderr, as the progress bar)
    for phase in ("closing ks_", "grading", "verifying grade", "writing the report"):
        assert f"✓ {phase}" in done.stderr
    # what the demo leaves under the home is private, as everything there
    for path in [home, *home.rglob("*")]:
        assert path.stat().st_mode & 0o077 == 0, (path, oct(path.stat().st_mode))


def test_report_is_self_contained(demo_run: tuple[Path, GradeResult, str]) -> None:
    _, _, html = demo_run
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", html)
    assert "<link" not in html
    assert html.count("<svg") >= 3


def test_report_shows_the_grades_numbers_and_every_fill(
    demo_run: tuple[Path, GradeResult, str],
) -> None:
    _, grade, html = demo_run
    m = grade.metrics
    for key, value in (("pnl", m.pnl), ("return", m.return_), ("sharpe", m.sharpe)):
        assert f'data-metric="{key}">{value}<' in html
    for key, value in m.to_json().items():  # every metric and trade statistic, null as —
        shown = "—" if value is None else str(value)
        assert f'data-metric-row="{key}">{shown}<' in html
    assert m.trades > 0
    assert html.count('class="fill-marker"') == m.fills
    for check in grade.conformance.checks:
        assert f'data-check="{check.id}"' in html
    assert grade.root in html
    assert grade.conformance.root in html


def test_report_renders_in_headless_chromium(
    demo_run: tuple[Path, GradeResult, str], tmp_path: Path
) -> None:
    browser = require_peer(chromium(), what="Chromium", install=INSTALL_SERVICES)
    report, grade, _ = demo_run
    profile = tmp_path / "profile"
    dom = dump_dom(browser, report, profile)
    assert dom.returncode == 0, dom.stderr[-2000:]
    assert 'data-rendered="ok"' in dom.stdout
    assert "Uncaught" not in dom.stderr
    found = dict(re.findall(r'data-metric="(\w+)">([^<]*)<', dom.stdout))
    assert found["pnl"] == grade.metrics.pnl
    assert found["maxDrawdown"] == grade.metrics.max_drawdown
    assert found["sharpe"] == grade.metrics.sharpe
    shot = tmp_path / "report.png"
    taken = screenshot(browser, report, profile, shot)
    assert taken.returncode == 0, taken.stderr[-2000:]
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert shot.stat().st_size > 20_000  # a blank page compresses to a few KB


def test_report_of_a_200k_bar_run_keeps_every_fill_and_stays_small(tmp_path: Path) -> None:
    program = tmp_path / "swing.kes"
    program.write_text(
        "".join("buy 10 ACME\nadvance 4000\nsell 10 ACME\nadvance 4000\n" for _ in range(20)),
        encoding="utf-8",
    )
    proof_file = tmp_path / "p.json"
    ran = _kestrel(
        tmp_path / "home",
        "run",
        str(program),
        "--scenario",
        "minute-200k",
        "--quiet",
        "--out",
        str(proof_file),
    )
    assert ran.returncode == 0, ran.stderr
    proof = Proof.parse(proof_file.read_bytes())
    out = tmp_path / "r.html"
    # a proof carries what the report needs: another home (without the session) will do
    made = _kestrel(tmp_path / "elsewhere", "report", str(proof_file), "-o", str(out))
    assert made.returncode == 0, made.stderr
    html = out.read_text(encoding="utf-8")
    grade = proof.grade
    assert grade.metrics.fills == 40
    assert grade.metrics.trades == 20
    assert html.count('class="fill-marker"') == 40
    assert out.stat().st_size < 1_500_000
    assert grade.root in html
    assert 'data-metric-row="trades">20<' in html


def test_the_demo_leaves_the_scenario_it_shows_unseen_and_names_a_failed_check(
    tmp_path: Path,
) -> None:
    """A new user in an empty home: the demo, then the example's own run of the scenario
    the demo showed, then the demo again."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("KESTREL_")}
    env |= {"HOME": str(tmp_path), "COLUMNS": "200"}
    kestrel = str(Path(sys.executable).parent / "kestrel")
    example = Path(__file__).resolve().parents[3] / "examples" / "trend.kes"

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [kestrel, *args], capture_output=True, text=True, timeout=300, env=env, check=False
        )

    first = run("demo")
    assert first.returncode == 0, first.stderr
    assert "showing acme-trend to the principal 'demo'" in first.stderr
    assert "failed " not in first.stdout
    # the example's line, after the demo: the user's own principal was shown nothing
    mine = run("run", str(example), "--scenario", "acme-trend", "--json")
    assert mine.returncode == 0, mine.stderr
    grade = GradeResult.parse(mine.stdout.encode())
    lookahead = next(c for c in grade.conformance.checks if c.id == "no-lookahead")
    assert lookahead.passed, lookahead.detail
    assert grade.passed
    # a second demo: the demo's principal was shown the whole tape; the table says why,
    # its grade and report are written, and it exits 1 as `kestrel run` (was: 0)
    again = run("demo")
    assert again.returncode == 1, again.stderr
    failed = [line for line in again.stdout.splitlines() if line.startswith("failed ")]
    assert len(failed) == 1, again.stdout
    assert failed[0].split(None, 1)[1].startswith("no-lookahead: tape acme-trend read"), failed
    paths = dict(line.split(None, 1) for line in again.stdout.splitlines()[-3:])
    grade = GradeResult.parse(Path(paths["grade"]).read_bytes())
    assert not grade.passed
    assert Path(paths["report"]).is_file()
    assert again.stderr.splitlines()[-1] == (
        f"kestrel: CHECK_FAILED: grade {grade.root} of session {grade.session} "
        "failed check(s): no-lookahead"
    )
    quiet = run("demo", "--quiet")
    assert quiet.returncode == 1, quiet.stderr
    assert "kestrel: failed check no-lookahead: " in quiet.stderr
    assert Path(quiet.stdout.strip()).is_file()  # the report's path, as when it passed


def test_the_demo_on_an_unknown_scenario_says_only_that(tmp_path: Path) -> None:
    """``kestrel demo --scenario nope``: one line naming the unknown id, not first a line
    saying it is "showing nope" to the demo's principal."""
    done = _kestrel(tmp_path / "home", "demo", "--scenario", "nope")
    assert done.returncode == 3, done.stderr
    assert done.stderr == "kestrel: UNKNOWN_SCENARIO: no scenario 'nope' in the catalog\n"
    assert done.stdout == ""


def test_the_demo_through_a_sealed_door_keeps_its_grade_and_says_why_no_report(
    tmp_path: Path,
) -> None:
    """``kestrel --remote DOOR demo --scenario acme-chop`` where the door seals acme-chop:
    a report needs the tape, which the door does not serve, so the demo ends with its
    table, its verified grade's path and a report line saying why there is none, exit 0
    (it used to end on ``SCENARIO_SEALED`` after the grade, its path never said)."""
    with serve_door(tmp_path / "door", "--seal", "acme-chop") as door:
        env = {k: v for k, v in os.environ.items() if not k.startswith("KESTREL_")}
        env |= {"HOME": str(tmp_path / "me"), "COLUMNS": "200", "KESTREL_API_TOKEN": door.token}
        kestrel = str(Path(sys.executable).parent / "kestrel")
        done = subprocess.run(
            [kestrel, "--remote", door.url, "demo", "--scenario", "acme-chop"],
            capture_output=True,
            text=True,
            timeout=300,
            env=env,
            check=False,
        )
    assert done.returncode == 0, done.stderr
    lines = dict(line.split(None, 1) for line in done.stdout.splitlines()[-2:])
    assert lines["report"].startswith("none: acme-chop is sealed"), done.stdout
    grade = GradeResult.parse(Path(lines["grade"]).read_bytes())
    assert grade.scenario.id == "acme-chop"
    assert not (Path(lines["grade"]).parent / "report.html").exists()
