"""One horizon per lineage whatever each process's catalog holds (issue 48, session 15).

Two processes on one store (the home's SQLite file, or one PostgreSQL schema) serve
different catalogs: one the shipped catalog, the other also ``aaa-copy``, an import of
acme-trend's bars whose id sorts first. The agent scouts acme-trend in one (a session
run to the tape's last bar, or the tape read) and trades acme-trend in the other: the
trade must fail ``no-lookahead`` naming the scout. Before, the horizon key was the
first id of this catalog's scenarios of those bars: ``aaa-copy`` in one process,
``acme-trend`` in the other, two rows, and the trade passed.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import kestrel_sdk
import pytest
from kestrel_protocol import GradeResult
from kestrel_sdk.runtime import Runtime
from kestrel_sdk.runtime.stores import open_runtime_store
from kestrel_sdk.scenarios import scenario_from_file

SCENARIO = "acme-trend"
COPY = "aaa-copy"
END = 2519  # acme-trend's last bar
PRINCIPAL = "alice"

# Another OS process: a runtime on the store ($KESTREL_STORE, else the home's SQLite
# file) over the shipped catalog, and the catalog directory argv[2] when not empty,
# scouting acme-trend: a session run to its last bar (its id printed), or its tape read.
SCOUT = """
import sys
from kestrel_sdk.runtime import Runtime
home, catalog, how = sys.argv[1:4]
runtime = Runtime(home, [catalog] if catalog else [])
if how == "tape":
    runtime.tape("alice", "acme-trend")
else:
    sid = runtime.open_session("alice", "acme-trend", "scout").session_id
    runtime.submit("alice", sid, "advance 2519")
    print(sid)
runtime.shutdown()
"""


def _child(env: dict[str, str], script: str, *args: str) -> str:
    """``script`` run with ``args`` in another OS process (succeeding): what it printed."""
    child = subprocess.run(
        [sys.executable, "-c", script, *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert child.returncode == 0, child.stderr
    return child.stdout.strip()


def failed_lookahead(runtime: Runtime, principal: str, scenario: str = SCENARIO) -> str:
    """A session of ``principal`` on ``scenario`` trading at bar 0, graded: its
    ``no-lookahead`` detail (asserted failed)."""
    sid = runtime.open_session(principal, scenario, "trade").session_id
    assert sid is not None
    runtime.submit(principal, sid, "buy 10 ACME\nadvance 1")
    grade = runtime.grade(principal, sid)
    assert isinstance(grade, GradeResult)
    check = next(c for c in grade.conformance.checks if c.id == "no-lookahead")
    assert not check.passed, check.detail
    return check.detail


def copy_catalog(root: Path) -> Path:
    """A catalog holding ``aaa-copy``, an import of acme-trend's bars (the same tape root)."""
    tape = Path(kestrel_sdk.__file__).parent / "catalog_data" / SCENARIO / "tape.csv"
    scenario_from_file(tape, COPY, symbol="ACME").write(root / COPY)
    return root


def _store(request: pytest.FixtureRequest, kind: str) -> tuple[str | None, dict[str, str]]:
    """The store's URL (``None``: the home's SQLite file) and the child's environment."""
    env = dict(os.environ)
    env.pop("KESTREL_STORE", None)
    env.pop("KESTREL_CATALOG_PATH", None)
    if kind == "sqlite":
        return None, env
    dsn: str = request.getfixturevalue("postgres_dsn")
    env["KESTREL_STORE"] = dsn
    return dsn, env


@pytest.mark.parametrize("kind", ["sqlite", "postgresql"])
@pytest.mark.parametrize("scout_by", ["session", "tape"])
@pytest.mark.parametrize("copy_in", ["trader's catalog", "scout's catalog"])
def test_a_scout_in_one_process_is_seen_by_a_trade_in_another_with_another_catalog(
    request: pytest.FixtureRequest, tmp_path: Path, kind: str, scout_by: str, copy_in: str
) -> None:
    home = tmp_path / "home"
    catalog = copy_catalog(tmp_path / "catalog")
    url, env = _store(request, kind)
    scout_catalog = str(catalog) if copy_in == "scout's catalog" else ""
    scouted = _child(env, SCOUT, str(home), scout_catalog, scout_by)
    trader_catalog = [catalog] if copy_in == "trader's catalog" else []
    runtime = Runtime(home, trader_catalog, store=open_runtime_store(url, home))
    try:
        detail = failed_lookahead(runtime, PRINCIPAL)
        shown = (
            f"tape {SCENARIO} read"
            if scout_by == "tape"
            else f"session {scouted} of the same principal had reached bar {END}"
        )
        assert detail.startswith(f"{shown} before submission 1 at bar 0"), detail
    finally:
        runtime.shutdown()


# Another OS process: a runtime over the catalog argv[2] (empty: the shipped one) scouting
# alone the scenario argv[3] to its last bar, the session then closed or left open
# (stepped, not closed); its id printed.
LONE_SCOUT = """
import sys
from kestrel_sdk.runtime import Runtime
home, catalog, scenario, how = sys.argv[1:5]
runtime = Runtime(home, [catalog] if catalog else [])
sid = runtime.open_session("alice", scenario, "scout").session_id
runtime.submit("alice", sid, "advance 2519")
if how == "closed":
    runtime.close("alice", sid)
print(sid)
runtime.shutdown()
"""


def _lone_scout_then_trade(
    request: pytest.FixtureRequest,
    tmp_path: Path,
    kind: str,
    left: str,
    *,
    scout: tuple[bool, str],
    trade: tuple[bool, str],
) -> tuple[str, str]:
    """A scout run alone in a child process, then a trade opened in this one: each a
    (catalog with the copy?, scenario). The scout's id, and the trade's ``no-lookahead``
    detail (asserted failed)."""
    home = tmp_path / "home"
    catalog = copy_catalog(tmp_path / "catalog")
    url, env = _store(request, kind)
    scout_catalog = str(catalog) if scout[0] else ""
    scouted = _child(env, LONE_SCOUT, str(home), scout_catalog, scout[1], left)
    runtime = Runtime(home, [catalog] if trade[0] else [], store=open_runtime_store(url, home))
    try:
        return scouted, failed_lookahead(runtime, PRINCIPAL, trade[1])
    finally:
        runtime.shutdown()


@pytest.mark.parametrize("kind", ["sqlite", "postgresql"])
@pytest.mark.parametrize("left", ["closed", "open"])
def test_a_lone_scout_on_a_twin_the_traders_catalog_lacks_is_seen(
    request: pytest.FixtureRequest, tmp_path: Path, kind: str, left: str
) -> None:
    """The scout runs alone (its clock written nowhere but its own session) on
    ``aaa-copy``, which only its process's catalog holds; the trade on acme-trend,
    opened second on the lineage by a runtime of the shipped catalog, must fail
    ``no-lookahead`` naming it. Before, the opener looked for the principal's sessions
    on the twins its own catalog holds, and the trade passed."""
    scout, detail = _lone_scout_then_trade(
        request, tmp_path, kind, left, scout=(True, COPY), trade=(False, SCENARIO)
    )
    shown = f"session {scout} on {COPY} of the same principal had reached bar {END}"
    assert detail.startswith(f"{shown} before submission 1 at bar 0"), detail


@pytest.mark.parametrize("kind", ["sqlite", "postgresql"])
@pytest.mark.parametrize("left", ["closed", "open"])
@pytest.mark.parametrize(
    "case",
    [((True, SCENARIO), (False, SCENARIO), ""), ((False, SCENARIO), (True, COPY), SCENARIO)],
    ids=["on the twin the trader's catalog holds", "the reverse: trade on the copy"],
)
def test_a_lone_scout_on_a_twin_both_catalogs_hold_is_still_seen(
    request: pytest.FixtureRequest,
    tmp_path: Path,
    kind: str,
    left: str,
    case: tuple[tuple[bool, str], tuple[bool, str], str],
) -> None:
    """The scout on acme-trend, which every catalog holds: seen by a trade on acme-trend
    in a runtime of the shipped catalog, and by one on the copy in a runtime of the
    copy's catalog (named with the twin it ran on)."""
    scout, trade, on = case
    sid, detail = _lone_scout_then_trade(request, tmp_path, kind, left, scout=scout, trade=trade)
    twin = f" on {on}" if on else ""
    shown = f"session {sid}{twin} of the same principal had reached bar {END}"
    assert detail.startswith(f"{shown} before submission 1 at bar 0"), detail
