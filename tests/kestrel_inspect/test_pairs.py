"""``-T pairs=LABELLED,DISGUISED`` (issue 46): one ``inspect eval`` trades a labelled tape
(backtesting.py's GOOG, imported) and its disguised twin with the offline agent over
``kestrel-mcp``, a catalog path holding both. Each run is its own trial, so the twin does
not fail ``no-lookahead`` for the other; each sample names its pair and role. ``kestrel
board`` on the log lists the pair as unconfirmed (and counts nothing) until the reveal
is given; then the agent's gap is its labelled run's return and Sharpe minus its
disguised run's."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from inspect_ai.log import EvalLog, read_eval_log
from kestrel_inspect import METADATA_KEY, kestrel_trading
from kestrel_sdk.runtime.catalog import load_catalog
from kestrel_sdk.scenarios import disguise_scenario, scenario_from_file

KESTREL = str(Path(sys.executable).parent / "kestrel")
SECRET = bytes(range(32))
PAIR = ("goog", "tape-q7")


def _goog() -> Path:
    import backtesting.test  # type: ignore[import-untyped]

    return Path(backtesting.test.__file__).with_name("GOOG.csv")


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, EvalLog]:
    """The catalog (GOOG imported and its twin), the reveal, and the eval's log."""
    root = tmp_path_factory.mktemp("pairs")
    catalog = root / "catalog"
    scenario_from_file(_goog(), PAIR[0]).write(catalog / PAIR[0])
    source = load_catalog([catalog]).get(PAIR[0])
    assert source is not None
    disguised = disguise_scenario(source, PAIR[1], SECRET)
    disguised.write(catalog / PAIR[1])
    (root / "reveal.json").write_text(json.dumps(disguised.reveal))
    env = {k: v for k, v in os.environ.items() if not k.startswith("KESTREL_")}
    env["HOME"] = str(root / "home")
    logs = root / "logs"
    done = subprocess.run(
        [
            *(sys.executable, "-m", "inspect_ai", "eval", "kestrel_inspect/kestrel_trading"),
            *("-T", f"pairs={','.join(PAIR)}", "-T", f"catalog_path={catalog}"),
            *("-T", f"home={root / 'kestrel'}", "-T", "agent=momentum"),
            *("--model", "kestrel/momentum", "-M", "step=250"),
            *("--log-dir", str(logs), "--display", "none"),
        ],
        env=env,
        cwd=root,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    [path] = list(logs.iterdir())
    log = read_eval_log(str(path))
    assert log.status == "success", log.error
    return root, log


def _board(root: Path, *args: str) -> dict[str, Any]:
    env = {**os.environ, "KESTREL_CATALOG_PATH": str(root / "catalog")}
    done = subprocess.run(
        [KESTREL, "board", str(root / "logs"), "--json", "-o", str(root / "board.html"), *args],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        env=env,
    )
    assert done.returncode == 0, done.stderr
    gaps: dict[str, Any] = json.loads(done.stdout)["gaps"]
    return gaps


def _scores(log: EvalLog) -> dict[str, dict[str, Any]]:
    assert log.samples is not None
    found = {}
    for sample in log.samples:
        assert sample.scores is not None
        found[str(sample.id)] = sample.scores["kestrel_scorer"].metadata[METADATA_KEY]  # type: ignore[index]
    return found


def test_each_twin_is_a_sample_naming_its_pair_and_role_and_a_trial_of_its_own(
    run: tuple[Path, EvalLog],
) -> None:
    _, log = run
    assert log.samples is not None
    roles = {str(s.id): (s.metadata["pair"], s.metadata["role"]) for s in log.samples}
    assert roles == {PAIR[0]: (list(PAIR), "labelled"), PAIR[1]: (list(PAIR), "disguised")}
    scores = _scores(log)
    assert scores[PAIR[0]]["trial"] != scores[PAIR[1]]["trial"]
    for scenario, kestrel in scores.items():
        grade = kestrel["proof"]["grade"]
        assert grade["scenario"]["id"] == scenario
        assert grade["passed"] is True, grade["checks"]  # no-lookahead passes on both twins


def test_without_the_reveal_the_pair_is_unconfirmed_and_counts_nothing(
    run: tuple[Path, EvalLog],
) -> None:
    root, _ = run
    gaps = _board(root)
    [pair] = gaps["pairs"]
    assert (pair["labelled"], pair["disguised"], pair["status"]) == (*PAIR, "unconfirmed")
    assert "no reveal of tape-q7 given" in pair["why"]
    assert [run["counted"] for run in pair["agents"]] == [False]
    assert gaps["agents"] == []
    page = (root / "board.html").read_text()
    assert 'data-pair-status="unconfirmed"' in page


def test_with_the_reveal_the_board_shows_the_agents_gap(run: tuple[Path, EvalLog]) -> None:
    root, log = run
    gaps = _board(root, "--reveal", str(root / "reveal.json"))
    [pair] = gaps["pairs"]
    assert pair["status"] == "confirmed", pair["why"]
    [agent] = gaps["agents"]
    assert (agent["agent"], agent["pairs"]) == ("momentum", 1)
    scores = _scores(log)
    for key in ("return", "sharpe"):
        labelled = Decimal(scores[PAIR[0]]["proof"]["grade"]["metrics"][key])
        disguised = Decimal(scores[PAIR[1]]["proof"]["grade"]["metrics"][key])
        mean = f"{labelled - disguised:.8f}"
        assert agent[key] == {"n": 1, "mean": mean, "low": None, "high": None}
        assert f'data-gap-mean="{key}">{mean}<' in (root / "board.html").read_text()


def test_several_pairs_as_inspect_splits_them() -> None:
    """``-T "pairs=a,a-x;b,b-x"`` reaches the task split at its commas."""
    task = kestrel_trading(pairs=["a", "a-x;b", "b-x"])
    found = [(s.id, s.metadata["pair"], s.metadata["role"]) for s in task.dataset]  # type: ignore[index]
    assert found == [
        ("a", ["a", "a-x"], "labelled"),
        ("a-x", ["a", "a-x"], "disguised"),
        ("b", ["b", "b-x"], "labelled"),
        ("b-x", ["b", "b-x"], "disguised"),
    ]


def test_a_pair_is_two_scenarios() -> None:
    with pytest.raises(ValueError, match="a pair is LABELLED,DISGUISED"):
        kestrel_trading(pairs="goog,tape-q7;goog-x")
    with pytest.raises(ValueError, match="goog twice"):
        kestrel_trading("goog", pairs="goog,tape-q7")
