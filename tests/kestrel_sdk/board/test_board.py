"""``kestrel board``: every proof verified as ``kestrel verify`` verifies it, badged,
ranked per scenario and overall; failures listed with their reason and never ranked;
one self-contained page that a real browser renders, and the same table as JSON."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from tests.browser import dump_dom, screenshot
from tests.kestrel_sdk.board.proofs import forged_proof, made_proof, tampered, write
from tests.peers import INSTALL_SERVICES, chromium, require_peer

CAUTIOUS = ("buy 10 ACME", "advance 30", "sell 10 ACME", "advance 3000")
BOLD = ("buy 400 ACME", "advance 60", "sell 400 ACME", "advance 3000")


def kestrel(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KESTREL_")}
    return subprocess.run(
        [str(Path(sys.executable).parent / "kestrel"), *args],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        cwd=cwd,
        check=False,
    )


@pytest.fixture(scope="module")
def proofs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory of proofs: two agents (a folder each) on acme-chop and acme-trend, an
    agent that read the tape while trading acme-chop (its grade does not pass), a tampered
    copy, the embedded-tape forgery, a grade (not a proof) and a file that is not JSON."""
    root = tmp_path_factory.mktemp("board")
    folder = root / "proofs"
    homes = root / "homes"
    cautious_chop = made_proof(homes / "a", "acme-chop", CAUTIOUS)
    write(folder / "cautious" / "chop.json", cautious_chop)
    write(folder / "bold" / "chop.json", made_proof(homes / "b", "acme-chop", BOLD))
    write(folder / "cautious" / "trend.json", made_proof(homes / "c", "acme-trend", CAUTIOUS))
    write(folder / "bold" / "trend.json", made_proof(homes / "d", "acme-trend", BOLD))
    write(folder / "peeker" / "chop.json", made_proof(homes / "f", "acme-chop", BOLD, peek=True))
    write(folder / "tampered.json", tampered(cautious_chop))
    write(folder / "forged.json", forged_proof(homes / "e"))
    write(folder / "a-grade.json", cautious_chop["grade"])
    (folder / "notes.json").write_text("not json {", encoding="utf-8")
    return folder


def _name(row: dict[str, Any]) -> str:
    """A row's file, as AGENT/FILE for an agent's folder."""
    path = Path(row["source"])
    return f"{path.parent.name}/{path.stem}" if path.parent.name != "proofs" else path.stem


@pytest.fixture(scope="module")
def board(proofs: Path) -> dict[str, Any]:
    done = kestrel("board", "--allow-failed", str(proofs), "--json")
    assert done.returncode == 0, done.stderr
    data: dict[str, Any] = json.loads(done.stdout)
    return data


def test_a_row_per_proof_with_its_badge_and_reason(board: dict[str, Any]) -> None:
    rows = {_name(r): r for r in board["rows"]}
    assert sorted(rows) == sorted(
        [
            "a-grade",
            "bold/chop",
            "cautious/chop",
            "forged",
            "notes",
            "peeker/chop",
            "tampered",
            "bold/trend",
            "cautious/trend",
        ]
    )
    for name in ("bold/chop", "cautious/chop", "bold/trend", "cautious/trend"):
        assert rows[name]["badge"] == "replayed-only"
        assert rows[name]["reason"] == "verified by replay"
        assert rows[name]["provenance"] == "catalog"
    # verified, but its grade did not pass: a failed row (never a passing badge) naming
    # the check it failed, never ranked
    peeker = rows["peeker/chop"]
    assert (peeker["badge"], peeker["passed"], peeker["rank"]) == ("failed", False, None)
    assert peeker["checks"]["no-lookahead"].startswith("failed: ")
    assert peeker["reason"].startswith("verified by replay; failed no-lookahead failed: ")
    assert rows["tampered"]["badge"] == "failed"
    assert rows["tampered"]["reason"] == (
        "verification failed: grade.metrics.pnl: expected "
        f"{rows['cautious/chop']['metrics']['pnl']}, found 999999.00"
    )
    forged = rows["forged"]
    assert forged["badge"] == "failed"
    assert forged["provenance"] == "embedded"
    assert (
        "embeds a scenario named acme-trend that is not the catalog's acme-trend"
        in (forged["reason"])
    )
    assert rows["a-grade"]["reason"].startswith("a grade, not a proof")
    assert rows["notes"]["reason"].startswith("not readable JSON")
    for name in ("tampered", "forged", "a-grade", "notes"):
        assert rows[name]["rank"] is None
        assert rows[name]["metrics"] is None  # a claim that did not verify shows no figure


def test_the_forgery_passes_replay_alone(proofs: Path) -> None:
    """Why the board checks provenance: ``kestrel verify`` replays the forgery fine."""
    done = kestrel("verify", str(proofs / "forged.json"))
    assert done.returncode == 0, done.stderr
    assert "verified by replay" in done.stdout


def test_rankings_per_scenario_and_overall(board: dict[str, Any]) -> None:
    rows = {_name(r): r for r in board["rows"]}
    assert board["metric"] == "sharpe"
    for scenario, names in (
        ("acme-chop", ("cautious/chop", "bold/chop")),
        ("acme-trend", ("cautious/trend", "bold/trend")),
    ):
        [ranking] = [s for s in board["scenarios"] if s["scenario"] == scenario]
        by_sharpe = sorted(names, key=lambda n: -Decimal(rows[n]["metrics"]["sharpe"]))
        assert [_name(r) for r in ranking["ranking"]] == by_sharpe
        assert [r["rank"] for r in ranking["ranking"]] == [1, 2]
        assert ranking["root"] == rows[names[0]]["scenarioRoot"]
    assert {s["scenario"] for s in board["scenarios"]} == {"acme-chop", "acme-trend"}
    # overall: each agent's mean sharpe over its two scenarios (never a mean of ranks);
    # one run a cell, so no interval: the bounds are the value
    mean_sharpe = {
        agent: sum(Decimal(rows[f"{agent}/{s}"]["metrics"]["sharpe"]) for s in ("chop", "trend"))
        / 2
        for agent in ("cautious", "bold")
    }
    expected = sorted(mean_sharpe, key=lambda a: -mean_sharpe[a])
    assert [(s["rank"], s["agent"], s["scenarios"], s["n"]) for s in board["overall"]] == [
        (1, expected[0], 2, 2),
        (2, expected[1], 2, 2),
    ]
    assert [s["mean"] for s in board["overall"]] == [f"{mean_sharpe[a]:.8f}" for a in expected]


def test_max_drawdown_ranks_the_lowest_first(proofs: Path) -> None:
    done = kestrel("board", "--allow-failed", str(proofs), "--json", "--metric", "max-drawdown")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    rows = {_name(r): r for r in data["rows"]}
    [chop] = [s for s in data["scenarios"] if s["scenario"] == "acme-chop"]
    first, second = (rows[_name(r)] for r in chop["ranking"])
    assert Decimal(first["metrics"]["maxDrawdown"]) < Decimal(second["metrics"]["maxDrawdown"])


def test_the_page_is_self_contained_and_matches_the_json(
    proofs: Path, board: dict[str, Any], tmp_path: Path
) -> None:
    done = kestrel("board", "--allow-failed", str(proofs), "-o", str(tmp_path / "board.html"))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == (
        f"{tmp_path / 'board.html'}: 9 proofs (0 attested-and-sealed, 4 replayed-only, 5 failed)"
    )
    html = (tmp_path / "board.html").read_text(encoding="utf-8")
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", html)
    assert "<link" not in html
    shown = re.findall(
        r'data-row data-badge="([^"]+)" data-rank="([^"]+)" data-source="([^"]+)"', html
    )
    in_table = shown[-len(board["rows"]) :]  # the "every proof" table, in the order given
    assert [(b, s) for b, _, s in in_table] == [(r["badge"], r["source"]) for r in board["rows"]]
    for row in board["rows"]:
        for root in row["roots"].values():
            assert root in html


def test_the_page_renders_in_headless_chromium(proofs: Path, tmp_path: Path) -> None:
    browser = require_peer(chromium(), what="Chromium", install=INSTALL_SERVICES)
    page = tmp_path / "board.html"
    assert kestrel("board", "--allow-failed", str(proofs), "-o", str(page)).returncode == 0
    dom = dump_dom(browser, page, tmp_path / "profile")
    assert dom.returncode == 0, dom.stderr[-2000:]
    assert 'data-rendered="ok"' in dom.stdout
    assert "Uncaught" not in dom.stderr
    proofs_table = dom.stdout[dom.stdout.index('id="proofs"') :]
    badges = re.findall(r'<tr class="[^"]+" data-row="" data-badge="([^"]+)"', proofs_table)
    assert sorted(badges) == ["failed"] * 5 + ["replayed-only"] * 4
    assert "failed no-lookahead failed" in proofs_table
    shot = tmp_path / "board.png"
    taken = screenshot(browser, page, tmp_path / "profile", shot, size="1300,1600")
    assert taken.returncode == 0, taken.stderr[-2000:]
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert shot.stat().st_size > 20_000


def test_bad_input_is_named(tmp_path: Path) -> None:
    done = kestrel("board", str(tmp_path / "missing.json"), "--json")
    assert done.returncode == 1, done.stderr  # a failed row: the board is written, exit 1
    [row] = json.loads(done.stdout)["rows"]
    assert (row["badge"], row["reason"]) == ("failed", "no such file or directory")
    assert "1 of 1 row failed (first: " in done.stderr
    assert "--allow-failed" in done.stderr
    page = tmp_path / "one.html"
    kestrel("board", str(tmp_path / "missing.json"), "-o", str(page))
    assert "<title>Kestrel board — 1 proof ranked by " in page.read_text(encoding="utf-8")
    usage = kestrel("board")
    assert usage.returncode == 2
    assert "Missing argument 'PROOFS...'" in usage.stderr
    metric = kestrel("board", str(tmp_path), "--metric", "luck")
    assert metric.returncode == 2
    assert "'luck' is not one of" in metric.stderr


def test_a_directory_holding_no_proofs_is_refused_and_nothing_is_written(
    tmp_path: Path,
) -> None:
    """A board of nothing would rank no one and exit 0: an empty directory (or one whose
    files are none a board reads) is refused naming it, exit 1, and no page is written."""
    empty = tmp_path / "empty"
    empty.mkdir()
    notes = tmp_path / "notes"
    (notes / "agent").mkdir(parents=True)
    (notes / "agent" / "README.txt").write_text("proofs go here\n", encoding="utf-8")
    work = tmp_path / "work"
    work.mkdir()
    for folder in (empty, notes):
        for extra in ((), ("--allow-failed",), ("--json", "-o", str(work / "b.html"))):
            done = kestrel("board", str(folder), *extra, cwd=work)
            assert done.returncode == 1, done.stderr
            assert done.stderr.splitlines() == [
                f"kestrel: INVALID_INPUT: {folder}: the directory holds no proofs (no .json "
                "proof or .eval Inspect log in it or below it); no board written"
            ]
            assert done.stdout == ""
            assert list(work.iterdir()) == []
