"""``-T agent=NAME`` on the board (issue 50): two strategies run on one model are two
rows, not one; each cell says how many runs it holds and their interval; the shipped
``kestrel/hold`` agent earns exactly the board's own buy-and-hold baseline; a log that
completed no sample is a failed row that says so, and the board exits 1."""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.log import read_eval_log, write_eval_log
from kestrel_inspect import kestrel_trading

KESTREL = str(Path(sys.executable).parent / "kestrel")


def kestrel_board(*args: str) -> subprocess.CompletedProcess[str]:
    """``kestrel board ARGS`` in a child process, as a user runs it."""
    return subprocess.run(
        [KESTREL, "board", *args], capture_output=True, text=True, timeout=300, check=False
    )


def _evaluate(logs: Path, home: Path, agent: str, model: str, step: int) -> None:
    [log] = inspect_eval(
        kestrel_trading("acme-trend", home=str(home), agent=agent),
        model=model,
        model_args={"step": step},
        log_dir=str(logs),
        display="none",
    )
    assert log.status == "success", log.error


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two runs each of two strategies on the one model ``kestrel/momentum`` (a new
    home per run; each run's step a little different, since two identical runs of a
    deterministic agent are one proof, ranked once), named ``patient`` and ``eager``,
    and one run of ``kestrel/hold``."""
    root = tmp_path_factory.mktemp("agents")
    for run, (slow, fast) in enumerate(((500, 250), (480, 230))):
        _evaluate(root / "logs", root / f"p{run}", "patient", "kestrel/momentum", slow)
        _evaluate(root / "logs", root / f"e{run}", "eager", "kestrel/momentum", fast)
    _evaluate(root / "logs", root / "h", "holder", "kestrel/hold", 500)
    return root / "logs"


def test_two_strategies_on_one_model_are_two_named_rows_beside_buy_and_hold(
    logs: Path,
) -> None:
    done = kestrel_board(str(logs), "--json")
    assert done.returncode == 0, done.stderr
    board: dict[str, Any] = json.loads(done.stdout)
    assert sorted({r["agent"] for r in board["rows"]}) == ["eager", "holder", "patient"]
    assert {r["filedUnder"] for r in board["rows"]} == {"kestrel/momentum", "kestrel/hold"}
    [trend] = board["scenarios"]
    cells = {c["agent"]: c for c in trend["cells"]}
    assert sorted(cells) == ["eager", "holder", "patient"]
    assert [cells[a]["n"] for a in ("patient", "eager", "holder")] == [2, 2, 1]
    for agent in ("patient", "eager"):  # mean ± t(0.975, 1 df) · s / √2
        a, b = (Decimal(r["metrics"]["sharpe"]) for r in board["rows"] if r["agent"] == agent)
        mean = (a + b) / 2
        half = Decimal("12.706") * statistics.stdev([a, b]) / Decimal(2).sqrt()
        assert Decimal(cells[agent]["mean"]) == pytest.approx(mean, abs=Decimal("1e-8"))
        assert Decimal(cells[agent]["low"]) == pytest.approx(mean - half, abs=Decimal("1e-7"))
        assert Decimal(cells[agent]["high"]) == pytest.approx(mean + half, abs=Decimal("1e-7"))
        assert half > 0
    # the shipped hold agent buys half the equity at bar 0 and holds: the baseline's rule
    baseline = trend["baseline"]
    assert baseline["name"] == "buy-and-hold"
    assert cells["holder"]["mean"] == baseline["metrics"]["sharpe"]
    assert "buy-and-hold" not in [s["agent"] for s in board["overall"]]
    assert sorted(s["agent"] for s in board["overall"]) == ["eager", "holder", "patient"]


def test_a_log_that_completed_no_sample_is_a_failed_row(logs: Path, tmp_path: Path) -> None:
    log = read_eval_log(str(next(logs.iterdir())))
    log.samples, log.status, log.results = [], "error", None
    empty = tmp_path / "empty.json"
    write_eval_log(log, str(empty))
    done = kestrel_board(str(empty), "--json")
    assert done.returncode == 1
    [row] = json.loads(done.stdout)["rows"]
    assert row["badge"] == "failed"
    assert row["reason"] == "the log completed no sample (status error)"
    assert "the log completed no sample" in done.stderr
    assert "--allow-failed" in done.stderr
