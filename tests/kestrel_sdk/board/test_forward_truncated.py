"""A forward run's window end is bound by the door's signed statement (issue 48, session 14).

The board's ``whole-window`` check took a forward scenario's last bar from the tape the
proof embeds (its terms count only the declared prefix). Nothing bound the bars after
the session's head: no frame or root covers them, so an entrant who stopped at bar 3 of
9 cut the embedded tape after bar 3, recomputed the proof's root (the door's statement
is outside it, about the grade root, which does not change) and the row passed
``whole-window``. The door's statement now says how many bars the tape held when it
signed the grade (``edge``): the board takes the window's end from it and fails a
proof whose embedded tape holds fewer, naming both counts. Without a statement the end
is the proof's own word: the board never says the window was traded whole.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import anyio
import kestrel_sdk
from kestrel_door import DoorStore
from kestrel_door.attest import Attestor, attesting
from kestrel_door.feeds import RuntimeFeeds
from kestrel_door.keys import DoorKeys
from kestrel_protocol import root_of
from kestrel_sdk.board import Entry, check_entry
from kestrel_sdk.runtime import Runtime
from kestrel_sdk.runtime.catalog.tapes import HEADER
from kestrel_sdk.runtime.stores import open_runtime_store

from tests.kestrel_sdk.runtime.forward.scenarios import SCENARIO_ID, bar_rows, bars, forward_catalog

AT = "2999-01-01T00:00:00.000000Z"
"""When the bars after the prefix were published: after every decision (a forward run)."""
STOPPED = "stopped at bar 3 of 9: the session did not trade its whole window"
CUT = (
    "the embedded tape holds 4 bars; the door's statement says 10 were published when the "
    "grade was signed: the tape was cut"
)
SOURCE = "buy 3 ACME\nadvance 2\nsell 3 ACME\nadvance 1"


def _runtime(tmp_path: Path) -> Runtime:
    """A forward tape declared with two bars, grown to bar 9."""
    catalog = forward_catalog(tmp_path, prefix=2)
    runtime = Runtime(tmp_path / "home", [catalog], store=open_runtime_store("memory:"))
    runtime.append_bars(SCENARIO_ID, bars(2, 8), clock=lambda: AT)
    return runtime


def _proof(tmp_path: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """A session on the forward tape, stopped at bar 3 of 9, traded through a door that
    signs its proof; the tape frozen, unsealed and embedded. The proof, the door's keys."""
    runtime = _runtime(tmp_path)
    keys = DoorKeys(DoorStore(tmp_path / "door.db"))
    attestor = Attestor(keys, "https://door.test", feeds=RuntimeFeeds(runtime))

    async def run() -> dict[str, Any]:
        attestor.pseudonyms.load()
        make = attesting(
            lambda p: kestrel_sdk.local_transport(principal=p, runtime=runtime), attestor
        )
        async with kestrel_sdk.create_sdk(make("alice")) as sdk:
            opened = await sdk.open_session(SCENARIO_ID)
            assert opened.session is not None
            await opened.session.submit(SOURCE)
            runtime.freeze_feed(SCENARIO_ID)
            runtime.unseal_feed(SCENARIO_ID)
            proof: dict[str, Any] = (await sdk.proof(opened.session.id, embed_tape=True)).to_json()
            return proof

    try:
        return anyio.run(run), keys.jwks()
    finally:
        runtime.shutdown()


def _unattested_proof(tmp_path: Path) -> dict[str, Any]:
    """The same session, its proof asked of the runtime itself: no door's statement."""
    runtime = _runtime(tmp_path)
    sid = runtime.open_session("alice", SCENARIO_ID).session_id
    assert sid is not None
    runtime.submit("alice", sid, SOURCE)
    runtime.freeze_feed(SCENARIO_ID)
    runtime.unseal_feed(SCENARIO_ID)
    proof = runtime.proof("alice", sid, embed_tape=True).to_json()
    runtime.shutdown()
    return proof


def _cut(proof: dict[str, Any], bars_kept: int) -> dict[str, Any]:
    """The proof with its embedded tape cut after ``bars_kept`` bars, its root remade
    (over every member but the door's statement, which is outside it)."""
    tape = HEADER + "\n" + "".join(bar_rows(k) for k in range(bars_kept))
    data = {k: v for k, v in proof.items() if k != "root"}
    data["embedded"] = {**proof["embedded"], "tape": tape}
    rooted = {k: v for k, v in data.items() if k != "attestation"}
    return data | {"root": root_of(rooted)}


def test_a_forward_proof_whose_tape_is_cut_after_its_last_bar_still_fails_whole_window(
    tmp_path: Path,
) -> None:
    proof, jwks = _proof(tmp_path)
    honest = check_entry(Entry("honest.json", "alice", data=proof))
    assert honest.checks["whole-window"] == f"failed: {STOPPED}"
    cut = check_entry(Entry("cut.json", "alice", data=_cut(proof, 4)))
    assert cut.badge == "failed", cut.reason
    assert cut.checks.get("whole-window") == f"failed: {STOPPED}"
    assert f"whole-window failed: {CUT}" in cut.reason
    # the same under --trust: the statement holds (it is about the grade, unchanged)
    trusted = check_entry(Entry("cut.json", "alice", data=_cut(proof, 4)), trusted_keys=jwks)
    assert trusted.attested, trusted.reason
    assert trusted.forward is not None, trusted.reason
    assert trusted.badge == "failed", trusted.reason
    assert trusted.checks.get("whole-window") == f"failed: {STOPPED}"
    assert f"whole-window failed: {CUT}" in trusted.reason


def test_a_forward_proof_without_a_statement_never_passes_whole_window_on_its_word(
    tmp_path: Path,
) -> None:
    """Unattested, the cut proof's window end is its own word: the row does not say the
    session traded its whole window (the honest proof, which admits bar 9, fails it)."""
    proof = _unattested_proof(tmp_path)
    honest = check_entry(Entry("honest.json", "alice", data=proof))
    assert honest.checks["whole-window"] == f"failed: {STOPPED}"
    cut = check_entry(Entry("cut.json", "alice", data=_cut(proof, 4)))
    assert "whole-window" not in cut.checks, cut.reason
    assert cut.badge == "replayed-only", cut.reason
    unconfirmed = "whole-window unconfirmed: the forward tape's end is the proof's own word"
    assert unconfirmed in cut.reason, cut.reason


def _forged_edge(proof: dict[str, Any], bars: int) -> dict[str, Any]:
    """``proof`` with its door's statement saying ``bars`` were published (its signature,
    over the old payload, no longer holds)."""
    attestation = proof["attestation"]
    statement = json.loads(base64.b64decode(attestation["payload"]))
    statement["predicate"]["edge"] = {"bars": bars}
    payload = base64.b64encode(json.dumps(statement).encode()).decode()
    return proof | {"attestation": {**attestation, "payload": payload}}


def test_a_statement_s_edge_counts_only_once_its_signature_is_checked(tmp_path: Path) -> None:
    """The cut proof with its statement's edge edited to the cut: without ``--trust`` the
    statement is the proof's own word, so the row says whole-window is unconfirmed (never
    that it passed on that word); with ``--trust`` the edited statement does not hold."""
    proof, jwks = _proof(tmp_path)
    forged = _forged_edge(_cut(proof, 4), 4)
    unchecked = check_entry(Entry("forged.json", "alice", data=forged))
    unconfirmed = "whole-window unconfirmed: the forward tape's end is the proof's own word"
    assert unconfirmed in unchecked.reason, unchecked.reason
    assert not unchecked.attested, unchecked.reason
    trusted = check_entry(Entry("forged.json", "alice", data=forged), trusted_keys=jwks)
    assert not trusted.attested, trusted.reason
    assert trusted.badge == "failed", trusted.reason
