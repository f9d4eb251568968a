"""A forward run's window end is bound by the door's signed statement (issue 48, session 14).

The board's ``whole-window`` check took a forward scenario's last bar from the tape the
proof embeds (its terms count only the declared prefix). Nothing bound the bars after
the session's head: no frame or root covers them, so an entrant who stopped at bar 3 of
9 cut the embedded tape after bar 3, recomputed the proof's root (the door's statement
is outside it, about the grade root, which does not change) and the row passed
``whole-window``. The door's statement now says how many bars the tape held when it
signed the grade (``edge``): the board takes the window's end from it and fails a
proof whose embedded tape holds fewer, naming both counts. Without a statement the end
is the proof's own word: the board never says the window was traded whole. Under
``--trust`` the cut is refused by the verification ``kestrel verify --trust`` shares
(``embedded.tape``, in the same words).
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

from kestrel_protocol import root_of_bytes
from kestrel_sdk.board import Entry, check_entry

from tests.kestrel_sdk.board.forward_proofs import (
    CUT,
    STOPPED,
    TRUSTED_CUT,
    cut,
    signed_proof,
    unattested_proof,
)


def test_a_forward_proof_whose_tape_is_cut_after_its_last_bar_still_fails_whole_window(
    tmp_path: Path,
) -> None:
    proof, jwks = signed_proof(tmp_path)
    honest = check_entry(Entry("honest.json", "alice", data=proof))
    assert honest.checks["whole-window"] == f"failed: {STOPPED}"
    row = check_entry(Entry("cut.json", "alice", data=cut(proof, 4)))
    assert row.badge == "failed", row.reason
    assert row.checks.get("whole-window") == f"failed: {STOPPED}"
    assert f"whole-window failed: {CUT}" in row.reason
    # under --trust the statement's edge is the door's word: the cut tape does not hold
    # the statement, in the words of ``kestrel verify --trust``
    trusted = check_entry(Entry("cut.json", "alice", data=cut(proof, 4)), trusted_keys=jwks)
    assert trusted.badge == "failed", trusted.reason
    assert not trusted.attested, trusted.reason
    assert trusted.reason == f"verification failed: embedded.tape: {TRUSTED_CUT}"
    # the honest proof's statement holds under --trust: the row fails whole-window alone
    whole = check_entry(Entry("honest.json", "alice", data=proof), trusted_keys=jwks)
    assert whole.attested, whole.reason
    assert whole.checks["whole-window"] == f"failed: {STOPPED}"
    assert "the tape was cut" not in whole.reason


def test_a_forward_proof_without_a_statement_never_passes_whole_window_on_its_word(
    tmp_path: Path,
) -> None:
    """Unattested, the cut proof's window end is its own word: the row does not say the
    session traded its whole window (the honest proof, which admits bar 9, fails it)."""
    proof = unattested_proof(tmp_path)
    honest = check_entry(Entry("honest.json", "alice", data=proof))
    assert honest.checks["whole-window"] == f"failed: {STOPPED}"
    row = check_entry(Entry("cut.json", "alice", data=cut(proof, 4)))
    assert "whole-window" not in row.checks, row.reason
    assert row.badge == "replayed-only", row.reason
    unconfirmed = "whole-window unconfirmed: the forward tape's end is the proof's own word"
    assert unconfirmed in row.reason, row.reason


def _forged_edge(proof: dict[str, Any], bars: int) -> dict[str, Any]:
    """``proof`` with its door's statement saying ``bars`` were published, the root of the
    tape it embeds theirs (its signature, over the old payload, no longer holds)."""
    attestation = proof["attestation"]
    statement = json.loads(base64.b64decode(attestation["payload"]))
    root = root_of_bytes(proof["embedded"]["tape"].encode())
    statement["predicate"]["edge"] = {"bars": bars, "root": root}
    payload = base64.b64encode(json.dumps(statement).encode()).decode()
    return proof | {"attestation": {**attestation, "payload": payload}}


def test_a_statement_s_edge_counts_only_once_its_signature_is_checked(tmp_path: Path) -> None:
    """The cut proof with its statement's edge edited to the cut: without ``--trust`` the
    statement is the proof's own word, so the row says whole-window is unconfirmed (never
    that it passed on that word); with ``--trust`` the edited statement does not hold."""
    proof, jwks = signed_proof(tmp_path)
    forged = _forged_edge(cut(proof, 4), 4)
    unchecked = check_entry(Entry("forged.json", "alice", data=forged))
    unconfirmed = "whole-window unconfirmed: the forward tape's end is the proof's own word"
    assert unconfirmed in unchecked.reason, unchecked.reason
    assert not unchecked.attested, unchecked.reason
    trusted = check_entry(Entry("forged.json", "alice", data=forged), trusted_keys=jwks)
    assert not trusted.attested, trusted.reason
    assert trusted.badge == "failed", trusted.reason
