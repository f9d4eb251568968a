"""A scout pruned by another process still counts against the trader (issue 48).

``kestrel prune`` removes a closed, graded session's steps, its journal with them; the
bar a session's last journal row keeps is how an opening reads the clock the principal's
other sessions reached. The attack: the scout runs alone to the tape's end (``kestrel
run`` in another OS process), is graded, then pruned by ``kestrel prune`` in a third, so
that no journal row says where it got to; the trading session opened afterwards must
still fail ``no-lookahead`` naming the scout at the tape's end (its clock is read from
its head frame, which pruning keeps).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from kestrel_protocol import GradeResult
from kestrel_sdk.runtime import Runtime

from tests.kestrel_sdk.runtime.test_horizon_processes import (
    END,
    SCENARIO,
    TRADE,
    _assert_behind_scout,
    _open,
)

KESTREL = (sys.executable, "-c", "from kestrel_sdk.cli import main; main()")


def _kestrel(home: Path, *args: str) -> str:
    done = subprocess.run(
        [*KESTREL, "--home", str(home), *args],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_a_scout_pruned_by_another_process_still_fails_the_trader(tmp_path: Path) -> None:
    home = tmp_path / "home"
    program = tmp_path / "scout.kes"
    program.write_text(f"advance {END}\n")
    ran = _kestrel(home, "run", str(program), "--scenario", SCENARIO, "--label", "scout", "--json")
    scout = GradeResult.model_validate_json(ran).session
    pruned = json.loads(_kestrel(home, "prune", "--before", "2999-01-01", "--json"))
    assert [row["session"] for row in pruned["sessions"]] == [scout], pruned

    runtime = Runtime(home)
    assert runtime.store.journal(scout) == []  # nothing of its steps is left
    trader = _open(runtime, "trade", principal="local")  # the CLI's principal
    runtime.submit("local", trader, TRADE)
    _assert_behind_scout(runtime.grade("local", trader), scout)
    runtime.shutdown()
