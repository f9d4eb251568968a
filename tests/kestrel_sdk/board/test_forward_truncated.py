"""A forward run's window end is the proof's own claim (issue 48, session 14; open).

The board's ``whole-window`` check takes a forward scenario's last bar from the tape the
proof embeds (its terms count only the declared prefix). Nothing binds the bars after
the session's head: no frame, root or signed statement covers them, so an entrant who
stopped at bar 3 of 9 cuts the embedded tape after bar 3, recomputes the proof's root
(a door's statement is outside it, about the grade root, which does not change) and
the row passes ``whole-window``, with provenance ``catalog`` where the catalog holds
the scenario's terms. Marked ``xfail`` until something signed says where the tape
ended (the door's statement carrying the published edge, say).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from kestrel_protocol import root_of
from kestrel_sdk.board import Entry, check_entry
from kestrel_sdk.runtime import Runtime
from kestrel_sdk.runtime.catalog.tapes import HEADER
from kestrel_sdk.runtime.stores import open_runtime_store

from tests.kestrel_sdk.runtime.forward.scenarios import SCENARIO_ID, bar_rows, bars, forward_catalog

AT = "2026-12-01T14:31:02Z"
STOPPED = "stopped at bar 3 of 9: the session did not trade its whole window"


def _proof(tmp_path: Path) -> dict[str, Any]:
    """A session on a forward tape that grew to bar 9, stopped at bar 3; the tape frozen,
    unsealed and embedded."""
    catalog = forward_catalog(tmp_path, prefix=2)
    runtime = Runtime(tmp_path / "home", [catalog], store=open_runtime_store("memory:"))
    runtime.append_bars(SCENARIO_ID, bars(2, 8), clock=lambda: AT)
    sid = runtime.open_session("alice", SCENARIO_ID).session_id
    assert sid is not None
    runtime.submit("alice", sid, "buy 3 ACME\nadvance 2\nsell 3 ACME\nadvance 1")
    runtime.freeze_feed(SCENARIO_ID)
    runtime.unseal_feed(SCENARIO_ID)
    proof = runtime.proof("alice", sid, embed_tape=True).to_json()
    runtime.shutdown()
    return proof


def _cut(proof: dict[str, Any], bars_kept: int) -> dict[str, Any]:
    """The proof with its embedded tape cut after ``bars_kept`` bars, its root remade."""
    tape = HEADER + "\n" + "".join(bar_rows(k) for k in range(bars_kept))
    data = {k: v for k, v in proof.items() if k != "root"}
    data["embedded"] = {**proof["embedded"], "tape": tape}
    return data | {"root": root_of(data)}


@pytest.mark.xfail(strict=True, reason="a forward tape's end is bound by nothing the proof holds")
def test_a_forward_proof_whose_tape_is_cut_after_its_last_bar_still_fails_whole_window(
    tmp_path: Path,
) -> None:
    proof = _proof(tmp_path)
    honest = check_entry(Entry("honest.json", "alice", data=proof))
    assert honest.checks["whole-window"] == f"failed: {STOPPED}"
    cut = check_entry(Entry("cut.json", "alice", data=_cut(proof, 4)))
    assert cut.badge == "failed", cut.reason
    assert cut.checks.get("whole-window") == f"failed: {STOPPED}"
