"""The memorisation gap on the board (issue 46): two scripted strategies each trade two
shipped tapes and their disguised twins (fixed secret), every run as a principal of its
own. ``kestrel board --reveal`` shows, per agent, return and Sharpe on the labelled tapes
minus on the disguised ones, the mean over the pairs with N and a t-interval, the values
re-derived here from the grades; without the reveals no pair is made up; a reveal that
does not hold refutes its pair, which does not count; the page is the same bytes twice.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from decimal import ROUND_FLOOR, Decimal
from pathlib import Path
from typing import Any

import anyio
import pytest
from kestrel_sdk import create_sdk, local_transport
from kestrel_sdk.runtime.catalog import load_catalog
from kestrel_sdk.scenarios import disguise_scenario

KESTREL = str(Path(sys.executable).parent / "kestrel")
SECRET = bytes(range(32))
TWINS = {"acme-trend": "tape-r5", "acme-chop": "tape-w3"}
STRATEGIES = {"quick": 20, "patient": 400}
"""Each agent buys about half its equity at bar 0 and sells after this many bars."""


async def _trade(catalog: Path, home: Path, principal: str, scenario: str, hold: int) -> Any:
    sdk = create_sdk(local_transport(home=home, catalog_paths=[catalog], principal=principal))
    async with sdk:
        described = (await sdk.scenario(scenario)).to_json()
        opened = await sdk.open_session(scenario)
        assert opened.session is not None
        frame = (await opened.session.frame()).to_json()["frame"]
        instrument = described["instruments"][0]
        symbol, lot = instrument["symbol"], Decimal(str(instrument["lot"]))
        close, equity = Decimal(frame["marks"][symbol]), Decimal(frame["account"]["equity"])
        lots = (equity / 2 / close / lot).to_integral_value(rounding=ROUND_FLOOR)
        qty = min(int(lots * lot), int(described["account"]["maxPosition"]))
        for source in (f"buy {qty} {symbol}", f"advance {hold}", f"sell {qty} {symbol}"):
            await opened.session.submit(source)
        await opened.session.submit(f"advance {described['tape']['bars']}")
        return (await sdk.proof(opened.session.id)).to_json()


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """catalog/ (the two twins), reveals/ (their reveals) and proofs/AGENT/SCENARIO.json."""
    root = tmp_path_factory.mktemp("gap")
    shipped = load_catalog()
    for labelled, twin in TWINS.items():
        source = shipped.get(labelled)
        assert source is not None
        disguised = disguise_scenario(source, twin, SECRET)
        disguised.write(root / "catalog" / twin)
        (root / "reveals").mkdir(exist_ok=True)
        (root / "reveals" / f"{twin}.json").write_text(json.dumps(disguised.reveal))
    for agent, hold in STRATEGIES.items():
        (root / "proofs" / agent).mkdir(parents=True)
        for scenario in (*TWINS, *TWINS.values()):
            principal = f"{agent}-{scenario}"  # a principal per run: twins share a horizon
            proof = anyio.run(_trade, root / "catalog", root / "home", principal, scenario, hold)
            assert proof["grade"]["passed"] is True, proof["grade"]["checks"]
            (root / "proofs" / agent / f"{scenario}.json").write_text(json.dumps(proof))
    return root


def _board(made: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "KESTREL_CATALOG_PATH": str(made / "catalog")}
    return subprocess.run(
        [KESTREL, "board", str(made / "proofs"), *args],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        env=env,
    )


def _metric(made: Path, agent: str, scenario: str, key: str) -> Decimal:
    proof = json.loads((made / "proofs" / agent / f"{scenario}.json").read_text())
    return Decimal(proof["grade"]["metrics"][key])


def _expected(made: Path, agent: str, key: str) -> tuple[str, str, str]:
    """Mean over the two pairs of labelled minus disguised, and its t-interval (df 1)."""
    gaps = [
        _metric(made, agent, labelled, key) - _metric(made, agent, twin, key)
        for labelled, twin in TWINS.items()
    ]
    mean = (gaps[0] + gaps[1]) / 2
    half = Decimal("12.706") * abs(gaps[0] - gaps[1]) / 2
    return f"{mean:.8f}", f"{mean - half:.8f}", f"{mean + half:.8f}"


def _reveals(made: Path) -> list[str]:
    return [
        a for twin in TWINS.values() for a in ("--reveal", str(made / "reveals" / f"{twin}.json"))
    ]


def test_each_agent_shows_its_gap_labelled_minus_disguised(made: Path, tmp_path: Path) -> None:
    done = _board(made, "--json", "-o", str(tmp_path / "board.html"), *_reveals(made))
    assert done.returncode == 0, done.stderr
    gaps = json.loads(done.stdout)["gaps"]
    assert [p["status"] for p in gaps["pairs"]] == ["confirmed", "confirmed"], gaps["pairs"]
    assert {(p["labelled"], p["disguised"]) for p in gaps["pairs"]} == set(TWINS.items())
    assert [a["agent"] for a in gaps["agents"]] == sorted(STRATEGIES)
    page = (tmp_path / "board.html").read_text()
    assert 'id="gaps"' in page
    for found in gaps["agents"]:
        agent = found["agent"]
        assert found["pairs"] == len(TWINS)
        for key in ("return", "sharpe"):
            mean, low, high = _expected(made, agent, key)
            assert (found[key]["mean"], found[key]["low"], found[key]["high"]) == (mean, low, high)
            assert found[key]["n"] == len(TWINS)
            assert f'data-gap-mean="{key}">{mean}<' in page
    # the two agents' gaps differ: each is its own runs, paired by (agent, pair)
    assert gaps["agents"][0]["return"] != gaps["agents"][1]["return"]
    for pair in gaps["pairs"]:
        for run in pair["agents"]:
            want = _metric(made, run["agent"], pair["labelled"], "return") - _metric(
                made, run["agent"], pair["disguised"], "return"
            )
            assert run["return"] == f"{want:.8f}"
            assert (run["labelledRuns"], run["disguisedRuns"], run["counted"]) == (1, 1, True)


def test_without_a_reveal_no_pair_is_made_up(made: Path, tmp_path: Path) -> None:
    done = _board(made, "--json", "-o", str(tmp_path / "board.html"))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["gaps"]["pairs"] == []
    assert json.loads(done.stdout)["gaps"]["agents"] == []


def test_a_reveal_that_does_not_hold_refutes_its_pair(made: Path, tmp_path: Path) -> None:
    """The chop twin's reveal with another secret: refuted, named, not counted: each
    agent's gap is the trend pair's alone (N = 1, no interval)."""
    forged = json.loads((made / "reveals" / "tape-w3.json").read_text())
    forged["secret"] = "ff" * 32
    (tmp_path / "forged.json").write_text(json.dumps(forged))
    good = made / "reveals" / "tape-r5.json"
    done = _board(made, "--json", "--reveal", str(good), "--reveal", str(tmp_path / "forged.json"))
    assert done.returncode == 0, done.stderr
    gaps = json.loads(done.stdout)["gaps"]
    status = {p["disguised"]: p for p in gaps["pairs"]}
    assert status["tape-r5"]["status"] == "confirmed"
    assert status["tape-w3"]["status"] == "refuted"
    assert "reveal.commitment" in status["tape-w3"]["why"]
    assert "not counted" in status["tape-w3"]["why"]
    assert all(not run["counted"] for run in status["tape-w3"]["agents"])
    for found in gaps["agents"]:
        gap = _metric(made, found["agent"], "acme-trend", "sharpe") - _metric(
            made, found["agent"], "tape-r5", "sharpe"
        )
        assert found["pairs"] == 1
        assert found["sharpe"] == {"n": 1, "mean": f"{gap:.8f}", "low": None, "high": None}


def test_a_file_that_is_not_a_reveal_is_named(made: Path, tmp_path: Path) -> None:
    (tmp_path / "r.json").write_text('{"kind": "kestrel.proof"}')
    done = _board(made, "--reveal", str(tmp_path / "r.json"))
    assert done.returncode != 0
    assert "r.json: not a reveal" in done.stderr


def test_the_page_with_gaps_is_the_same_bytes_twice(made: Path, tmp_path: Path) -> None:
    for name in ("a.html", "b.html"):
        done = _board(made, "-o", str(tmp_path / name), *_reveals(made))
        assert done.returncode == 0, done.stderr
    assert (tmp_path / "a.html").read_bytes() == (tmp_path / "b.html").read_bytes()
