"""``kestrel verify --trust`` refuses a forward proof whose embedded tape was cut
(issue 48, session 14).

The door's signed statement about a forward session says how many bars its tape held
when the grade was signed (``edge``). Only the board compared it with the tape the proof
embeds: a proof whose tape was cut after the session's last bar (its root recomputed;
the statement is outside it) verified under ``--trust`` without remark. Once the
statement's signature holds, the trusted verification (the CLI's, and the SDK's
``check_attestation`` and ``proof_verification`` it shares with the board) names the
mismatch with both counts, in the board's words; without ``--trust`` the statement is
the proof's own word and replay alone is said.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from kestrel_protocol import canonical_json
from kestrel_sdk.cli import cli
from kestrel_sdk.cli.proofs import proof_verification
from kestrel_sdk.trust import NotAttested, check_attestation

from tests.kestrel_sdk.board.forward_proofs import CUT, TRUSTED_CUT, cut, signed_proof

REFUSED = f"verification failed: embedded.tape: {TRUSTED_CUT}"


def _verify(tmp_path: Path, proof: dict[str, Any], *trust: str) -> Result:
    """``kestrel verify PROOF`` in an empty home (``trust``: ``--trust JWKS``)."""
    (tmp_path / "proof.json").write_bytes(canonical_json(proof))
    args = ["--home", str(tmp_path / "elsewhere"), "verify", str(tmp_path / "proof.json")]
    return CliRunner().invoke(cli, [*args, *trust])


def test_kestrel_verify_trust_refuses_a_cut_forward_tape_naming_both_counts(
    tmp_path: Path,
) -> None:
    proof, jwks = signed_proof(tmp_path)
    (tmp_path / "jwks.json").write_text(json.dumps(jwks))
    trust = ("--trust", str(tmp_path / "jwks.json"))
    honest = _verify(tmp_path, proof, *trust)
    assert honest.exit_code == 0, honest.output
    assert "attested by https://door.test" in honest.stdout
    refused = _verify(tmp_path, cut(proof, 4), *trust)
    assert refused.exit_code != 0, refused.output
    assert REFUSED in refused.stderr, refused.output
    assert "attested by" not in refused.stdout
    as_json = _verify(tmp_path, cut(proof, 4), *trust, "--json")
    mismatch = json.loads(as_json.stdout)["mismatch"]
    assert mismatch["field"] == "embedded.tape"
    assert mismatch["found"] == CUT
    # without --trust the statement's edge is unchecked: replay alone is said
    unchecked = _verify(tmp_path, cut(proof, 4))
    assert unchecked.exit_code == 0, unchecked.output
    assert "attestation present, not checked" in unchecked.stdout


def test_the_sdk_s_trusted_verification_refuses_a_cut_forward_tape(tmp_path: Path) -> None:
    proof, jwks = signed_proof(tmp_path)
    assert check_attestation(proof, jwks).issuer == "https://door.test"
    with pytest.raises(NotAttested) as refused:
        check_attestation(cut(proof, 4), jwks)
    assert (refused.value.field, refused.value.found) == ("embedded.tape", CUT)
    report = proof_verification(cut(proof, 4), trusted_keys=jwks)
    assert not report.ok
    assert report.mismatch is not None
    assert (report.mismatch.field, report.mismatch.found) == ("embedded.tape", CUT)
    # a tape cut to exactly the bars the door signed, or not cut at all, is whole
    assert proof_verification(cut(proof, 10), trusted_keys=jwks).ok
    assert proof_verification(proof, trusted_keys=jwks).ok
