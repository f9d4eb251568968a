"""Fair comparisons on ``kestrel board`` (issue 50): each agent's runs of a scenario are
one cell with N, the mean and a 95% t-interval, cells whose intervals overlap share a
rank, the board's own buy-and-hold session sits beside them (never ranked), a session
that stops before its window ends fails a check that says so, and a board with a
failed row exits 1 naming it and the flag that accepts it."""

from __future__ import annotations

import csv
import io
import json
import statistics
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from kestrel_sdk.runtime.catalog import load_catalog, tape_csv

from tests.kestrel_sdk.board.proofs import made_proof, write
from tests.kestrel_sdk.board.test_board import kestrel

T_975 = {2: Decimal("4.303")}  # Student's t, two-sided 95%, for N = 3 runs (2 df)

END = "advance 3000"  # past the last bar: each run trades its whole window
RUNS: dict[str, list[tuple[str, ...]]] = {  # three runs each on acme-chop, of different lengths
    "steady": [("buy 100 ACME", f"advance {n}", "sell 100 ACME", END) for n in (400, 800, 1200)],
    "jumpy": [("buy 900 ACME", f"advance {n}", "sell 900 ACME", END) for n in (30, 700, 1500)],
    "late": [
        ("advance 2000", "buy 500 ACME", f"advance {n}", "sell 500 ACME", END)
        for n in (50, 150, 300)
    ],
}


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("fair")
    for agent, scripts in RUNS.items():
        for i, script in enumerate(scripts):
            proof = made_proof(root / "homes" / f"{agent}{i}", "acme-chop", script)
            write(root / "proofs" / agent / f"run{i}.json", proof)
    return root / "proofs"


@pytest.fixture(scope="module")
def board(folder: Path) -> dict[str, Any]:
    done = kestrel("board", str(folder), "--json")
    assert done.returncode == 0, done.stderr  # every row passed: exit 0
    data: dict[str, Any] = json.loads(done.stdout)
    return data


def test_each_cell_has_n_a_mean_and_a_t_interval(board: dict[str, Any]) -> None:
    [chop] = board["scenarios"]
    sharpes: dict[str, list[Decimal]] = {}
    for row in board["rows"]:
        sharpes.setdefault(row["agent"], []).append(Decimal(row["metrics"]["sharpe"]))
    cells = {cell["agent"]: cell for cell in chop["cells"]}
    assert sorted(cells) == sorted(RUNS)
    for agent, values in sharpes.items():
        mean = sum(values, Decimal(0)) / 3
        half = T_975[2] * statistics.stdev(values) / Decimal(3).sqrt()
        cell = cells[agent]
        assert cell["n"] == 3
        assert Decimal(cell["mean"]) == pytest.approx(mean, abs=Decimal("1e-8"))
        assert Decimal(cell["low"]) == pytest.approx(mean - half, abs=Decimal("1e-7"))
        assert Decimal(cell["high"]) == pytest.approx(mean + half, abs=Decimal("1e-7"))
        assert half > 0  # three different runs: a real spread


def test_cells_whose_intervals_overlap_share_a_rank(board: dict[str, Any]) -> None:
    [chop] = board["scenarios"]
    cells = chop["cells"]
    bounds = {c["agent"]: (Decimal(c["low"]), Decimal(c["high"])) for c in cells}
    for cell in cells:
        high = bounds[cell["agent"]][1]
        wholly_better = [a for a, (lo, _) in bounds.items() if lo > high]
        assert cell["rank"] == 1 + len(wholly_better), (cell, bounds)
    # ranks follow the means, never the reverse; every row wears its cell's rank
    by_mean = sorted(cells, key=lambda c: -Decimal(c["mean"]))
    assert [c["rank"] for c in by_mean] == sorted(c["rank"] for c in cells)
    for row in board["rows"]:
        assert row["rank"] == next(c["rank"] for c in cells if c["agent"] == row["agent"])
    assert board["method"].startswith("cells (agent x scenario) ranked by the mean")


def test_overall_is_the_mean_metric_not_the_mean_rank(board: dict[str, Any]) -> None:
    [chop] = board["scenarios"]
    means = {c["agent"]: c["mean"] for c in chop["cells"]}
    assert {s["agent"]: s["mean"] for s in board["overall"]} == means
    assert [s["n"] for s in board["overall"]] == [3, 3, 3]
    assert "meanRank" not in json.dumps(board["overall"])


def test_buy_and_hold_on_the_same_tape_is_a_baseline_of_no_one(
    board: dict[str, Any], folder: Path, tmp_path: Path
) -> None:
    [chop] = board["scenarios"]
    baseline = chop["baseline"]
    assert baseline["name"] == "buy-and-hold"
    # the same session traded here by hand: half the equity (100,000) bought at bar 0's
    # close, whole lots of 1, held to the end of the tape
    loaded = load_catalog().get("acme-chop")
    assert loaded is not None
    close = Decimal(next(csv.DictReader(io.StringIO(tape_csv(loaded))))["close"])
    qty = int(Decimal(50000) / close)
    by_hand = made_proof(tmp_path / "hold", "acme-chop", (f"buy {qty} ACME\nadvance 2519",))
    assert baseline["metrics"]["sharpe"] == by_hand["grade"]["metrics"]["sharpe"]
    assert baseline["metrics"]["return"] == by_hand["grade"]["metrics"]["return"]
    assert "buy-and-hold" not in {c["agent"] for c in chop["cells"]}
    assert "buy-and-hold" not in {s["agent"] for s in board["overall"]}
    page = tmp_path / "board.html"
    assert kestrel("board", str(folder), "-o", str(page)).returncode == 0
    html = page.read_text(encoding="utf-8")
    assert html.count("data-baseline") == 2  # the scenario's and the overall one
    assert "buy-and-hold (baseline, not ranked)" in html
    assert f"{Decimal(baseline['metrics']['sharpe']):.8f}" in html
    assert "95% interval" in html


def test_a_session_that_stops_early_fails_a_check_that_says_so(tmp_path: Path) -> None:
    """Ten bars of 2,520, flat at the end: the grade passes every check, and the board
    fails the row, names the bar it stopped at, and exits 1 naming --allow-failed."""
    script = ("buy 100 ACME", "advance 9", "sell 100 ACME", "advance 1")
    proof = made_proof(tmp_path / "home", "acme-trend", script)
    assert proof["grade"]["passed"] is True  # the grade alone would pass it
    write(tmp_path / "proofs" / "quitter" / "trend.json", proof)
    done = kestrel("board", str(tmp_path / "proofs"), "--json")
    assert done.returncode == 1
    [row] = json.loads(done.stdout)["rows"]
    assert (row["badge"], row["passed"], row["rank"]) == ("failed", False, None)
    assert "whole-window failed: stopped at bar 10 of 2519" in row["reason"]
    assert row["checks"]["whole-window"].startswith("failed: stopped at bar 10 of 2519")
    assert "1 of 1 row failed" in done.stderr
    assert "stopped at bar 10 of 2519" in done.stderr
    assert "--allow-failed" in done.stderr
    page = tmp_path / "board.html"
    accepted = kestrel("board", str(tmp_path / "proofs"), "--allow-failed", "-o", str(page))
    assert accepted.returncode == 0, accepted.stderr
    html = page.read_text(encoding="utf-8")
    assert 'data-badge="failed"' in html
    assert 'data-badge="replayed-only"' not in html  # never a passing badge


def test_the_page_is_the_same_bytes_built_twice(folder: Path, tmp_path: Path) -> None:
    pages = []
    for name in ("one", "two"):
        page = tmp_path / name / "board.html"
        assert kestrel("board", str(folder), "-o", str(page)).returncode == 0
        pages.append(page.read_bytes())
    assert pages[0] == pages[1]


def test_a_session_the_runtime_stood_down_at_max_drawdown_is_ranked(tmp_path: Path) -> None:
    """acme-crash stands a session down when its drawdown reaches 25%: its window ended
    there, so the board ranks it with its loss rather than dropping the loser."""
    proof = made_proof(tmp_path / "home", "acme-crash", ("buy 1500 ACME", "advance 3000"))
    clock, account = proof["head"]["clock"], proof["head"]["account"]
    assert clock["remaining"] > 0  # closed before the end of the tape
    assert Decimal(account["drawdown"]) >= Decimal("0.25")
    write(tmp_path / "proofs" / "reckless" / "crash.json", proof)
    done = kestrel("board", str(tmp_path / "proofs"), "--json")
    assert done.returncode == 0, done.stderr
    [row] = json.loads(done.stdout)["rows"]
    assert (row["badge"], row["rank"]) == ("replayed-only", 1)
    assert "whole-window" not in row["checks"]
