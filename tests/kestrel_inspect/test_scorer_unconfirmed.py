"""The scorer's ``whole-window`` where it cannot be told: a sealed scenario of a remote door.

A sealed frame does not say how many bars remain, so the board's check needs the scenario's
terms, from the proof (a sealed proof embeds no tape) or a catalog where the scorer runs. A
remote door's private sealed scenario is in neither: the check is ``unconfirmed`` and does
not fail the sample; where it can be told, a session that stopped early still fails.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from kestrel_inspect.scorer import score_of_proof
from kestrel_sdk.runtime import Runtime

PRINCIPAL = "scorer"


def _stopped_early_proof(home: Path) -> dict[str, Any]:
    """A real proof of a session on acme-trend that traded a round trip in ten bars and
    stood down flat: its grade passes every check."""
    runtime = Runtime(home)
    sid = runtime.open_session(PRINCIPAL, "acme-trend", "short").session_id
    assert sid is not None
    runtime.submit(PRINCIPAL, sid, "buy 10 ACME\nadvance 5")
    runtime.submit(PRINCIPAL, sid, 'sell 10 ACME\nadvance 5\nstand down "done"')
    proof: dict[str, Any] = json.loads(runtime.proof(PRINCIPAL, sid).text)
    assert proof["grade"]["passed"] is True
    return proof


def _as_a_remote_sealed_door_serves_it(proof: dict[str, Any]) -> dict[str, Any]:
    """The proof as a sealed scenario no catalog here holds gives it: its head's clock
    without ``remaining``, its scenario another id."""
    sealed = copy.deepcopy(proof)
    del sealed["head"]["clock"]["remaining"]
    sealed["scenario"]["id"] = "private-sealed"
    return sealed


def test_a_window_that_cannot_be_told_is_unconfirmed_and_fails_nothing(tmp_path: Path) -> None:
    proof = _stopped_early_proof(tmp_path / "home")
    told = score_of_proof(proof)
    assert isinstance(told.value, dict)
    assert told.value["passed"] == 0.0
    assert told.metadata is not None
    assert told.metadata["kestrel"]["whole_window"].startswith("failed: stopped at bar 10 of")

    untold = score_of_proof(_as_a_remote_sealed_door_serves_it(proof))
    assert isinstance(untold.value, dict)
    assert untold.metadata is not None
    assert untold.metadata["kestrel"]["whole_window"].startswith("unconfirmed: ")
    assert untold.value["passed"] == 1.0
    assert untold.value["return"] == told.metadata["kestrel"]["graded"]["return"]
    assert "whole-window" not in (untold.explanation or "")
