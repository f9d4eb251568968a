"""A tape counts once overall, whatever twins of it the catalog holds (issue 48).

A disguised twin and its source are one tape (one lineage: the horizon counts them as
one). The board counted each as a scenario of its own overall: an agent that ran
acme-trend and its disguise stood with two scenarios, as one that ran two tapes, and
its one tape weighed twice in its mean; ranked first among agents in as many scenarios,
it could outrank one that ran more tapes than it. Now an agent's cells on one lineage
are one figure overall (the mean of their means and bounds), and an agent is ranked by
the tapes it ran.
"""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import anyio
import pytest
from kestrel_sdk.board import build_board
from kestrel_sdk.runtime.catalog import load_catalog
from kestrel_sdk.scenarios import disguise_scenario

from tests.kestrel_sdk.board.proofs import write
from tests.kestrel_sdk.board.test_gap import SECRET, _trade

RUNS = {
    "twinned": ("acme-trend", "tape-r5"),  # one tape, under two ids
    "broad": ("acme-trend", "acme-chop"),  # two tapes
}


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("twins-overall")
    source = load_catalog().get("acme-trend")
    assert source is not None
    disguise_scenario(source, "tape-r5", SECRET).write(root / "catalog" / "tape-r5")
    for agent, scenarios in RUNS.items():
        (root / "proofs" / agent).mkdir(parents=True)
        for scenario in scenarios:
            principal = f"{agent}-{scenario}"  # twins share a horizon: a principal per run
            proof = anyio.run(_trade, root / "catalog", root / "home", principal, scenario, 20)
            assert proof["grade"]["passed"] is True, proof["grade"]["checks"]
            write(root / "proofs" / agent / f"{scenario}.json", proof)
    return root


def test_a_tape_and_its_twin_count_once_overall(made: Path) -> None:
    board = build_board([made / "proofs"], "return", catalog_paths=[made / "catalog"])
    cells = {
        (ranking.scenario, cell.agent): cell.stats.mean
        for ranking in board.scenarios
        for cell in ranking.cells
    }
    assert {scenario for scenario, _ in cells} == {"acme-trend", "tape-r5", "acme-chop"}
    standings = {s.agent: s for s in board.overall}
    assert (standings["twinned"].scenarios, standings["twinned"].proofs) == (1, 2)
    assert (standings["broad"].scenarios, standings["broad"].proofs) == (2, 2)
    assert [s.agent for s in board.overall] == ["broad", "twinned"]  # more tapes first
    # the one tape's figure is the mean of its two cells', not counted twice
    twinned = (cells[("acme-trend", "twinned")] + cells[("tape-r5", "twinned")]) / Decimal(2)
    assert standings["twinned"].stats.mean == twinned
