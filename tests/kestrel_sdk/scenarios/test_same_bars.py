"""Scenarios of the same bars are one tape to the horizon (issue 48, session 14).

An operator evaluates on a sealed import of bars a public scenario already ships
(``kestrel scenario new eval-7 --from tape.csv --sealed``: the same tape root), or keeps
such a copy beside a disguise of the public one. The agent scouts the public tape in
one OS process (``kestrel run`` to its last bar) and trades the other in another: the
copy, or the disguise, must fail ``no-lookahead`` naming the scout, as a disguise does
when no copy is in the catalog. Before, a plain copy was a lineage of its own, and a
copy whose id sorted before its source's became the key of the disguise's lineage
while the source kept its own, so both trades passed. Forward scenarios stay apart:
their tape roots are their declared prefixes', not the bars they grow.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import kestrel_sdk
import pytest
from kestrel_protocol import GradeResult
from kestrel_sdk.runtime import Runtime
from kestrel_sdk.runtime.catalog import load_catalog
from kestrel_sdk.runtime.stores import open_runtime_store
from kestrel_sdk.scenarios import ScenarioTermsInput, disguise_scenario, scenario_from_file

from tests.kestrel_sdk.runtime.forward.scenarios import bars, forward_catalog

SOURCE = "acme-trend"
END = 2519  # acme-trend's last bar
SECRET = bytes(range(32))
PRINCIPAL = "local"  # the CLI's principal


def _catalog(root: Path) -> Path:
    """A catalog beside the shipped one: ``acme-bars`` and ``eval-7``, imports of
    acme-trend's bars (the second sealed; the first's id sorting before acme-trend's),
    and ``tape-q7``, a disguise of acme-trend."""
    source = load_catalog([]).get(SOURCE)
    assert source is not None
    tape = Path(kestrel_sdk.__file__).parent / "catalog_data" / SOURCE / "tape.csv"
    for scenario_id, sealed in (("acme-bars", False), ("eval-7", True)):
        terms = ScenarioTermsInput(sealed=sealed)
        scenario_from_file(tape, scenario_id, symbol="ACME", terms=terms).write(root / scenario_id)
    disguise_scenario(source, "tape-q7", SECRET).write(root / "tape-q7")
    index = load_catalog([root])
    roots = {i: s.scenario.tape.root for i in ("acme-bars", "eval-7") if (s := index.get(i))}
    assert roots == {"acme-bars": source.scenario.tape.root, "eval-7": source.scenario.tape.root}
    return root


def _scout(home: Path, catalog: Path, tmp_path: Path) -> str:
    """acme-trend run to its last bar by ``kestrel run`` in another OS process; its id."""
    program = tmp_path / "scout.kes"
    program.write_text(f"advance {END}\n")
    kestrel = [sys.executable, "-c", "from kestrel_sdk.cli import main; main()"]
    where = ["--home", str(home), "--catalog-path", str(catalog)]
    scouting = ["run", str(program), "--scenario", SOURCE, "--label", "scout", "--json"]
    run = subprocess.run(
        [*kestrel, *where, *scouting],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    return GradeResult.model_validate_json(run.stdout).session


@pytest.mark.parametrize("traded", ["eval-7", "acme-bars", "tape-q7"])
def test_scouting_a_tape_then_trading_a_scenario_of_its_bars_fails_no_lookahead(
    tmp_path: Path, traded: str
) -> None:
    catalog = _catalog(tmp_path / "catalog")
    home = tmp_path / "home"
    scout = _scout(home, catalog, tmp_path)
    runtime = Runtime(home, [catalog])
    try:
        sid = runtime.open_session(PRINCIPAL, traded, "trade").session_id
        assert sid is not None
        symbol = runtime.scenario(PRINCIPAL, traded).instruments[0].symbol
        runtime.submit(PRINCIPAL, sid, f"buy 10 {symbol}\nadvance 1")
        grade = runtime.grade(PRINCIPAL, sid)
        assert isinstance(grade, GradeResult)
        check = next(c for c in grade.conformance.checks if c.id == "no-lookahead")
        assert not check.passed, check.detail
        assert check.detail.startswith(
            f"session {scout} on {SOURCE} of the same principal had reached bar {END} "
            "before submission 1 at bar 0"
        ), check.detail
    finally:
        runtime.shutdown()


def test_forward_scenarios_declared_with_the_same_prefix_stay_apart(tmp_path: Path) -> None:
    """Two forward scenarios declared with no bars share a tape root (the header's alone),
    not their bars: a session run ahead on one leaves the other's session passing."""
    catalogs = [forward_catalog(tmp_path / name, scenario_id=name) for name in ("fwd-a", "fwd-b")]
    runtime = Runtime(tmp_path / "home", catalogs, store=open_runtime_store("memory:"))
    try:
        for name in ("fwd-a", "fwd-b"):
            runtime.append_bars(name, bars(0, 20), clock=lambda: "2026-12-01T14:31:02Z")
        ahead = runtime.open_session(PRINCIPAL, "fwd-a", "ahead").session_id
        assert ahead is not None
        runtime.submit(PRINCIPAL, ahead, "advance 15")
        sid = runtime.open_session(PRINCIPAL, "fwd-b", "trade").session_id
        assert sid is not None
        runtime.submit(PRINCIPAL, sid, "buy 1 ACME\nadvance 1")
        grade = runtime.grade(PRINCIPAL, sid)
        assert isinstance(grade, GradeResult)
        check = next(c for c in grade.conformance.checks if c.id == "no-lookahead")
        assert check.passed, check.detail
    finally:
        runtime.shutdown()
